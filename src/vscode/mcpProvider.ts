/**
 * Offers each folder's MCP server to VS Code itself, so its own agent can use
 * the same memories as Claude Code.
 */
import * as vscode from 'vscode';
import { DisposableOwner } from './lifecycle';
import type { WorkspaceMemories } from './workspaceMemories';

export const MCP_PROVIDER_ID = 'ltm.mcpServers';

export class LtmMcpProvider extends DisposableOwner implements vscode.McpServerDefinitionProvider<vscode.McpHttpServerDefinition> {
  private readonly changed = this.own(new vscode.EventEmitter<void>());
  readonly onDidChangeMcpServerDefinitions = this.changed.event;

  constructor(
    private readonly memories: WorkspaceMemories,
    private readonly version: string,
  ) {
    super();
    this.own(memories.onDidChange((folder) => folder === undefined && this.changed.fire()));
    // Another window's server is offered too; a takeover changes the port.
    this.own(memories.onDidChangeServer(() => this.changed.fire()));
  }

  /** Call when a server started, stopped or moved. */
  serversChanged(): void {
    this.changed.fire();
  }

  provideMcpServerDefinitions(): vscode.McpHttpServerDefinition[] {
    return this.memories
      .withStores()
      .filter((f) => f.server)
      .map(
        (f) =>
          new vscode.McpHttpServerDefinition(
            `LTM memories: ${f.name}`,
            vscode.Uri.parse(f.server!.mcpUrl),
            { Authorization: `Bearer ${f.server!.token}` },
            this.version,
          ),
      );
  }
}
