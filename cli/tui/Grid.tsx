/**
 * The panes of one page, placed by `layoutPanes`: rows of fixed-size boxes. The
 * caller decides which agents are on the page and which one is focused.
 */
import { Box } from "ink";
import type { ReactNode } from "react";
import type { GridLayout } from "./layout.js";
import type { AgentView } from "./state.js";

/** Props of Grid. */
export interface GridProps {
  layout: GridLayout;
  /** The agents of this page, in slot order. */
  agents: AgentView[];
  renderPane: (agent: AgentView, slot: number, width: number, height: number) => ReactNode;
}

/** The grid. */
export function Grid({ layout, agents, renderPane }: GridProps) {
  const rows: ReactNode[] = [];
  for (let r = 0; r < layout.rows; r++) {
    const cells = layout.rects.filter((rect) => rect.row === r && rect.slot < agents.length);
    if (cells.length === 0) break;
    rows.push(
      <Box key={r} flexDirection="row">
        {cells.map((rect) => (
          <Box key={agents[rect.slot]!.name} width={rect.width} height={rect.height}>
            {renderPane(agents[rect.slot]!, rect.slot, rect.width, rect.height)}
          </Box>
        ))}
      </Box>,
    );
  }
  return <Box flexDirection="column">{rows}</Box>;
}
