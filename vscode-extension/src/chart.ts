// A webview with a target's coverage and execs/s over time: an SVG drawn by
// chartSvg.ts from the samples of fuzzls/status, redrawn on each notification.
// Nothing is loaded from outside the webview (a strict Content-Security-Policy).

import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { renderChart } from './chartSvg';
import type { FuzzlsContext } from './context';
import { targetKey } from './coverageModel';
import type { Node } from './fuzzingView';
import type { TargetID } from './protocol';

export class Charts implements vscode.Disposable {
	private readonly panels = new Map<string, vscode.WebviewPanel>();
	private readonly disposables: vscode.Disposable[] = [];

	constructor(private readonly ctx: FuzzlsContext) {
		this.disposables.push(
			vscode.commands.registerCommand('fuzzls.showChart', (arg?: unknown) => this.show(arg)),
			ctx.onStatus(() => this.redraw()),
		);
	}

	private async pick(arg: unknown): Promise<TargetID | undefined> {
		const n = arg as Partial<Node> | undefined;
		if (n && n.kind === 'target' && n.session) {
			return { package: n.session.package, name: n.session.name };
		}
		const t = arg as Partial<TargetID> | undefined;
		if (t && typeof t.package === 'string' && typeof t.name === 'string') {
			return { package: t.package, name: t.name };
		}
		const sessions = this.ctx.status?.sessions ?? [];
		if (sessions.length === 0) {
			void vscode.window.showInformationMessage('fuzzls: no fuzzing session yet; start one with "▶ Fuzz".');
			return undefined;
		}
		if (sessions.length === 1) {
			return sessions[0];
		}
		const p = await vscode.window.showQuickPick(
			sessions.map((s) => ({ label: s.name, description: s.package, target: { package: s.package, name: s.name } })),
			{ placeHolder: 'Chart of which target?' },
		);
		return p?.target;
	}

	async show(arg?: unknown): Promise<void> {
		const t = await this.pick(arg);
		if (!t) {
			return;
		}
		const key = targetKey(t);
		let panel = this.panels.get(key);
		if (panel) {
			panel.reveal();
			return;
		}
		panel = vscode.window.createWebviewPanel('fuzzls.chart', `Fuzzing: ${t.name}`, vscode.ViewColumn.Beside, {
			enableScripts: true,
			localResourceRoots: [],
		});
		panel.webview.html = page(randomBytes(16).toString('base64'), renderChart(this.ctx.history.get(key), `${t.name} — ${t.package}`));
		panel.onDidDispose(() => this.panels.delete(key));
		this.panels.set(key, panel);
	}

	private redraw(): void {
		for (const [key, panel] of this.panels) {
			if (!panel.visible) {
				continue;
			}
			const name = key.slice(key.lastIndexOf('.') + 1);
			void panel.webview.postMessage({ svg: renderChart(this.ctx.history.get(key), `${name} — ${key.slice(0, key.lastIndexOf('.'))}`) });
		}
	}

	dispose(): void {
		for (const p of this.panels.values()) {
			p.dispose();
		}
		for (const d of this.disposables) {
			d.dispose();
		}
	}
}

function page(nonce: string, svg: string): string {
	return `<!DOCTYPE html>
<html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-${nonce}';">
<style>
#chart { max-width: 960px; }
body { color: var(--vscode-foreground); font-family: var(--vscode-font-family); }
.fuzzls-chart text { fill: var(--vscode-foreground); font-size: 12px; }
.fuzzls-chart .title { font-weight: bold; }
.fuzzls-chart .frame { stroke: var(--vscode-panel-border, #888); }
.fuzzls-chart polyline { stroke-width: 2; }
.fuzzls-chart .coverage { stroke: var(--vscode-charts-green, #3c9a5f); }
.fuzzls-chart text.coverage { fill: var(--vscode-charts-green, #3c9a5f); stroke: none; }
.fuzzls-chart .rate { stroke: var(--vscode-charts-blue, #3794ff); }
.fuzzls-chart text.rate { fill: var(--vscode-charts-blue, #3794ff); stroke: none; }
</style></head>
<body><div id="chart">${svg}</div>
<script nonce="${nonce}">
window.addEventListener('message', (e) => { if (e.data && typeof e.data.svg === 'string') document.getElementById('chart').innerHTML = e.data.svg; });
</script></body></html>`;
}
