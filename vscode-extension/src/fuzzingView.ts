// The "Fuzzing" view (Explorer area): package → target → crashes, corpus size and
// coverage, from the last fuzzls/status and the crash diagnostics.

import * as vscode from 'vscode';
import type { FuzzlsContext } from './context';
import { crashes, type Crash } from './crashInput';
import type { SessionStatus } from './protocol';
import { byPackage, formatRate, quietText } from './statusModel';

export type Node =
	| { kind: 'package'; pkg: string; sessions: SessionStatus[] }
	| { kind: 'target'; session: SessionStatus }
	| { kind: 'crashes'; session: SessionStatus; crashes: Crash[] }
	| { kind: 'crash'; crash: Crash }
	| { kind: 'info'; label: string; description: string; icon: string };

export const viewId = 'fuzzls.fuzzing';

function crashesOf(s: SessionStatus): Crash[] {
	return crashes().filter((c) => c.data.target.package === s.package && c.data.target.name === s.name);
}

const stateIcons: Record<string, string> = { building: 'loading~spin', fuzzing: 'sync~spin', stopped: 'circle-outline', error: 'error' };

export class FuzzingView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
	private readonly changed = new vscode.EventEmitter<Node | undefined>();
	readonly onDidChangeTreeData = this.changed.event;
	private readonly disposables: vscode.Disposable[] = [];
	readonly view: vscode.TreeView<Node>;

	constructor(private readonly ctx: FuzzlsContext) {
		this.view = vscode.window.createTreeView(viewId, { treeDataProvider: this, showCollapseAll: true });
		this.disposables.push(
			this.view,
			ctx.onStatus(() => this.changed.fire(undefined)),
			ctx.onReset(() => this.changed.fire(undefined)),
			vscode.languages.onDidChangeDiagnostics(() => this.changed.fire(undefined)),
			vscode.commands.registerCommand('fuzzls.showView', () => vscode.commands.executeCommand(`${viewId}.focus`)),
		);
	}

	getChildren(n?: Node): Node[] {
		if (!n) {
			return [...byPackage(this.ctx.status)].map(([pkg, sessions]) => ({ kind: 'package', pkg, sessions }));
		}
		switch (n.kind) {
			case 'package':
				return n.sessions.map((session) => ({ kind: 'target', session }));
			case 'target': {
				const s = n.session;
				const pct = s.blocks > 0 ? ` (${Math.round((100 * s.covered) / s.blocks)}%)` : '';
				const quiet = quietText(s);
				return [
					{ kind: 'crashes', session: s, crashes: crashesOf(s) },
					{ kind: 'info', label: 'corpus', description: `${s.corpus} entries`, icon: 'database' },
					{ kind: 'info', label: 'coverage', description: `${s.covered}/${s.blocks} blocks${pct}`, icon: 'symbol-ruler' },
					...(quiet ? [{ kind: 'info', label: 'plateau', description: quiet, icon: 'watch' } as const] : []),
					{ kind: 'info', label: 'executions', description: `${s.execs.toLocaleString('en-US')} · ${formatRate(s.execsPerSec)}/s`, icon: 'dashboard' },
				];
			}
			case 'crashes':
				return n.crashes.map((crash) => ({ kind: 'crash', crash }));
			default:
				return [];
		}
	}

	getTreeItem(n: Node): vscode.TreeItem {
		const C = vscode.TreeItemCollapsibleState;
		switch (n.kind) {
			case 'package': {
				const it = new vscode.TreeItem(n.pkg, C.Expanded);
				it.iconPath = new vscode.ThemeIcon('package');
				it.contextValue = 'package';
				return it;
			}
			case 'target': {
				const s = n.session;
				const it = new vscode.TreeItem(s.name, C.Expanded);
				const quiet = s.state === 'fuzzing' ? quietText(s) : undefined;
				it.description = s.state + (s.state === 'fuzzing' ? ` · ${formatRate(s.execsPerSec)} execs/s` : '') + (s.crashes ? ` · ${s.crashes} crash${s.crashes === 1 ? '' : 'es'}` : '') + (quiet ? ` · ${quiet}` : '');
				it.tooltip = s.message || undefined;
				it.iconPath = new vscode.ThemeIcon(stateIcons[s.state] ?? 'beaker');
				it.contextValue = 'target';
				if (s.uri) {
					it.resourceUri = vscode.Uri.parse(s.uri);
					it.command = { command: 'vscode.open', title: 'Open', arguments: [vscode.Uri.parse(s.uri)] };
				}
				return it;
			}
			case 'crashes': {
				const count = Math.max(n.crashes.length, n.session.crashes);
				const it = new vscode.TreeItem('crashes', n.crashes.length > 0 ? C.Expanded : C.None);
				it.description = String(count);
				it.iconPath = new vscode.ThemeIcon(count > 0 ? 'bug' : 'pass');
				return it;
			}
			case 'crash': {
				const d = n.crash.diagnostic;
				const it = new vscode.TreeItem(d.message.split('\n')[0], C.None);
				it.description = `${vscode.workspace.asRelativePath(n.crash.uri)}:${d.range.start.line + 1}`;
				it.tooltip = d.message;
				it.iconPath = new vscode.ThemeIcon('error');
				it.contextValue = 'crash';
				it.command = { command: 'vscode.open', title: 'Open', arguments: [n.crash.uri, { selection: d.range }] };
				return it;
			}
			case 'info': {
				const it = new vscode.TreeItem(n.label, C.None);
				it.description = n.description;
				it.iconPath = new vscode.ThemeIcon(n.icon);
				return it;
			}
		}
	}

	dispose(): void {
		this.changed.dispose();
		for (const d of this.disposables) {
			d.dispose();
		}
	}
}
