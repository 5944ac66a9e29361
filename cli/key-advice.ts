/**
 * The worker's advice for a missing API key names `--api-key`, a flag of `pi`. Agents
 * started by `pi-orch spawn` or `run` take no such flag, so the CLI says what works
 * there instead. Pure.
 */

const MISSING_KEY =
  /no API key for provider "([^"]+)": (?:set (\w+), )?pass --api-key, or set providers\.\S+\.apiKey in models\.json/;

/**
 * `message` with the worker's missing-key advice rewritten for agents of a background
 * supervisor (`daemon`: it holds the environment it started with) or of `pi-orch run`
 * (the command's own environment). Other messages come back unchanged.
 */
export function keyAdvice(message: string, where: "daemon" | "run", home: string): string {
  return message.replace(MISSING_KEY, (_all, provider: string, env: string | undefined) => {
    const file = `providers.${provider}.apiKey in ${home}/models.json`;
    if (!env) return `no API key for provider "${provider}": set ${file}`;
    return where === "run"
      ? `no API key for provider "${provider}": set ${env}, or ${file}`
      : `no API key for provider "${provider}": set ${file}, or ${env} in the supervisor's environment (it keeps the one it started with: pi-orch shutdown, export ${env}, then spawn again)`;
  });
}
