// The "Fuzzing" view (Explorer area): package → target → crashes, blockers, then
// statusModel's targetRows (corpus size, coverage, plateau, executions, the
// target's own mutators and generators), from the last fuzzls/status, the crash diagnostics
// and fuzzls.blockers (asked of the daemon for the fuzzing targets, at most every
// blockersEvery).

import * as vscode from 'vscode';
import type { FuzzlsContext } from './context';
import { crashes, type Crash } from './crashInput';
import { CommandBlockers, StateFuzzing, type Blocker, type BlockersResult, type SessionStatus } from './protocol';
import { blockerText, byPackage, engineLabel, formatRate, quietText, targetRows } from './statusModel';

export type Node =
	| { kind: 'package'; pkg: string; sessions: SessionStatus[] }
	| { kind: 'target'; session: SessionStatus }
	| { kind: 'crashes'; session: SessionStatus; crashes: Crash[] }
	| { kind: 'crash'; crash: Crash }
	| { kind: 'blockers'; blockers: Blocker[] }
	| { kind: 'blocker'; blocker: Blocker }
	| { kind: 'info'; label: string; description: string; icon: string; tooltip?: string };

export const viewId = 'fuzzls.fuzzing';

function crashesOf(s: SessionStatus): Crash[] {
	return crashes().filter((c) => c.data.target.package === s.package && c.data.target.name === s.name);
}

/** blockersEvery is how often (ms) a fuzzing target's blockers are asked for: the daemon recomputes them no more often. */
const blockersEvery = 3000;

function key(s: SessionStatus): string {
	return `${s.package}.${s.name}`;
}

const stateIcons: Record<string, string> = { building: 'loading~spin', fuzzing: 'sync~spin', stopped: 'circle-outline', error: 'error' };

export class FuzzingView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
	private readonly changed = new vscode.EventEmitter<Node | undefined>();
	readonly onDidChangeTreeData = this.changed.event;
	private readonly disposables: vscode.Disposable[] = [];
	readonly view: vscode.TreeView<Node>;
	/** The blockers of each target, as last asked, and when. */
	private readonly blockers = new Map<string, { at: number; list: Blocker[] }>();

	constructor(private readonly ctx: FuzzlsContext) {
		this.view = vscode.window.createTreeView(viewId, { treeDataProvider: this, showCollapseAll: true });
		this.disposables.push(
			this.view,
			ctx.onStatus(() => {
				this.changed.fire(undefined);
				void this.refreshBlockers();
			}),
			ctx.onReset(() => {
				this.blockers.clear();
				this.changed.fire(undefined);
			}),
			vscode.languages.onDidChangeDiagnostics(() => this.changed.fire(undefined)),
			vscode.commands.registerCommand('fuzzls.showView', () => vscode.commands.executeCommand(`${viewId}.focus`)),
		);
	}

	/** refreshBlockers asks the daemon for the blockers of the fuzzing targets whose list is due. */
	private async refreshBlockers(): Promise<void> {
		if (!this.view.visible) {
			return;
		}
		const now = Date.now();
		for (const s of this.ctx.status?.sessions ?? []) {
			const last = this.blockers.get(key(s));
			if (s.state !== StateFuzzing || (last && now - last.at < blockersEvery)) {
				continue;
			}
			this.blockers.set(key(s), { at: now, list: last?.list ?? [] });
			try {
				const res = await this.ctx.daemon.command<BlockersResult>(CommandBlockers, { package: s.package, name: s.name });
				const list = res?.blockers ?? [];
				if (JSON.stringify(list) !== JSON.stringify(last?.list ?? [])) {
					this.blockers.set(key(s), { at: now, list });
					this.changed.fire(undefined);
				}
			} catch (e) {
				this.ctx.log(`fuzzls.blockers: ${String(e)}`);
			}
		}
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
				const blockers = this.blockers.get(key(s))?.list ?? [];
				return [
					{ kind: 'crashes', session: s, crashes: crashesOf(s) },
					...(blockers.length > 0 ? [{ kind: 'blockers', blockers } as const] : []),
					...targetRows(s).map((row) => ({ kind: 'info', ...row }) as const),
				];
			}
			case 'crashes':
				return n.crashes.map((crash) => ({ kind: 'crash', crash }));
			case 'blockers':
				return n.blockers.map((blocker) => ({ kind: 'blocker', blocker }));
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
				it.description = (engineLabel(s) ? `${engineLabel(s)} · ` : '') + s.state + (s.state === 'fuzzing' ? ` · ${formatRate(s.execsPerSec)} execs/s` : '') + (s.crashes ? ` · ${s.crashes} crash${s.crashes === 1 ? '' : 'es'}` : '') + (quiet ? ` · ${quiet}` : '');
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
			case 'blockers': {
				const it = new vscode.TreeItem('blockers', C.Expanded);
				it.description = String(n.blockers.length);
				it.tooltip = 'Reached comparisons in front of code no input has reached, the most code behind first';
				it.iconPath = new vscode.ThemeIcon('debug-breakpoint-unverified');
				return it;
			}
			case 'blocker': {
				const b = n.blocker;
				const t = blockerText(b);
				const it = new vscode.TreeItem(t.label, C.None);
				it.description = t.description;
				it.tooltip = `${vscode.workspace.asRelativePath(vscode.Uri.parse(b.uri))}:${b.range.start.line + 1}: ${b.message}; ${b.behind} uncovered blocks behind`;
				it.iconPath = new vscode.ThemeIcon('circle-slash');
				it.contextValue = 'blocker';
				const r = new vscode.Range(b.range.start.line, b.range.start.character, b.range.end.line, b.range.end.character);
				it.command = { command: 'vscode.open', title: 'Open', arguments: [vscode.Uri.parse(b.uri), { selection: r }] };
				return it;
			}
			case 'info': {
				const it = new vscode.TreeItem(n.label, C.None);
				it.description = n.description;
				it.iconPath = new vscode.ThemeIcon(n.icon);
				it.tooltip = n.tooltip;
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
