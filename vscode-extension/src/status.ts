// The status bar: one item with the running targets, total execs/s and crashes
// (from fuzzls/status; its tooltip a line per target and one per mutator or
// generator of a target's own; a click opens the Fuzzing view), and one that shows and
// hides the coverage highlights.

import * as vscode from 'vscode';
import type { FuzzlsContext } from './context';
import type { CoverageDecorations } from './coverage';
import { mutatorLine, mutatorText, sessionLine, statusText, summarize } from './statusModel';

export class StatusBar implements vscode.Disposable {
	private readonly main: vscode.StatusBarItem;
	private readonly toggle: vscode.StatusBarItem;
	private readonly disposables: vscode.Disposable[] = [];

	constructor(private readonly ctx: FuzzlsContext, private readonly coverage: CoverageDecorations) {
		this.main = vscode.window.createStatusBarItem('fuzzls.status', vscode.StatusBarAlignment.Left, 50);
		this.main.name = 'fuzzls';
		this.main.command = 'fuzzls.showView';
		this.toggle = vscode.window.createStatusBarItem('fuzzls.coverage', vscode.StatusBarAlignment.Left, 49);
		this.toggle.name = 'fuzzls coverage';
		this.toggle.command = 'fuzzls.toggleCoverage';
		this.disposables.push(
			ctx.onStatus(() => this.update()),
			ctx.onReset(() => this.update()),
			ctx.onCoverage(() => this.update()),
			coverage.onDidChangeVisibility(() => this.update()),
		);
		this.update();
		this.main.show();
	}

	update(): void {
		const st = this.ctx.status;
		const sum = summarize(st);
		this.main.text = statusText(sum);
		const tip = new vscode.MarkdownString(undefined, true);
		tip.appendMarkdown(this.ctx.daemon.running ? '**fuzzls** — fuzzing while you code\n\n' : '**fuzzls** — daemon not running\n\n');
		for (const s of st?.sessions ?? []) {
			tip.appendText(sessionLine(s));
			tip.appendMarkdown('  \n');
			for (const m of s.mutators ?? []) {
				tip.appendMarkdown(`&nbsp;&nbsp;$(${mutatorText(m).icon}) `);
				tip.appendText(mutatorLine(m));
				tip.appendMarkdown('  \n');
			}
		}
		tip.appendMarkdown('\nClick to open the Fuzzing view.');
		this.main.tooltip = tip;
		this.main.backgroundColor = sum.crashes > 0 ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;

		const on = this.coverage.isVisible;
		this.toggle.text = on ? '$(eye) Coverage' : '$(eye-closed) Coverage';
		this.toggle.tooltip = on ? 'fuzzls: hide the coverage highlights' : 'fuzzls: show the coverage highlights';
		if (this.ctx.coverage.uris().size > 0 || !on) {
			this.toggle.show();
		} else {
			this.toggle.hide();
		}
	}

	dispose(): void {
		this.main.dispose();
		this.toggle.dispose();
		for (const d of this.disposables) {
			d.dispose();
		}
	}
}
