/** The terminal's size, updated on resize (re-lays the grid). */
import { useStdout } from "ink";
import { useEffect, useState } from "react";

/** Columns and rows of ink's stdout; `fixed` wins (tests, benchmarks). */
export function useTerminalSize(fixed?: { cols?: number; rows?: number }): { cols: number; rows: number } {
  const { stdout } = useStdout();
  const read = () => ({ cols: fixed?.cols ?? stdout.columns ?? 80, rows: fixed?.rows ?? stdout.rows ?? 24 });
  const [size, setSize] = useState(read);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `read` is new every render; what it reads is listed
  useEffect(() => {
    const onResize = () => setSize(read());
    stdout.on("resize", onResize);
    return () => void stdout.off("resize", onResize);
  }, [stdout, fixed?.cols, fixed?.rows]);
  return fixed?.cols !== undefined && fixed?.rows !== undefined ? { cols: fixed.cols, rows: fixed.rows } : size;
}
