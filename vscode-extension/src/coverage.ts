// Live coverage highlights: the ranges of fuzzls/coverage drawn with editor
// decorations (background and/or gutter, per fuzzls.coverageDecorator, always in
// the overview ruler), moved with the text while the user edits and replaced by
// the next notification. The uncovered blocks the last save changed (fuzzing is
// directed at them) are drawn apart: the uncovered look with a dashed warning-coloured
// border. fuzzls.toggleCoverage hides and shows them.

import * as vscode from 'vscode';
import { coverageDecorator, type CoverageDecorator } from './config';
import type { FuzzlsContext } from './context';
import type { Range } from './protocol';

const visibleKey = 'fuzzls.coverageVisible';

export class CoverageDecorations implements vscode.Disposable {
	private covered!: vscode.TextEditorDecorationType;
	private uncovered!: vscode.TextEditorDecorationType;
	private uncoveredChanged!: vscode.TextEditorDecorationType;
	private decorator: CoverageDecorator | undefined;
	private visible: boolean;
	private readonly disposables: vscode.Disposable[] = [];
	private readonly visibilityEmitter = new vscode.EventEmitter<boolean>();
	readonly onDidChangeVisibility = this.visibilityEmitter.event;

	constructor(private readonly ctx: FuzzlsContext) {
		this.visible = ctx.extension.workspaceState.get<boolean>(visibleKey, true);
		void vscode.commands.executeCommand('setContext', visibleKey, this.visible);
		this.createTypes(coverageDecorator(ctx.config()));
		this.disposables.push(
			vscode.commands.registerCommand('fuzzls.toggleCoverage', () => this.toggle()),
			ctx.onCoverage(({ uris }) => this.renderUris(uris)),
			ctx.onReset(() => this.renderAll()),
			vscode.window.onDidChangeVisibleTextEditors(() => this.renderAll()),
			vscode.workspace.onDidChangeTextDocument((e) => {
				if (e.contentChanges.length > 0 && ctx.coverage.edit(e.document.uri.toString(), e.contentChanges)) {
					this.renderUris(new Set([e.document.uri.toString()]));
				}
			}),
			vscode.workspace.onDidChangeConfiguration((e) => {
				if (e.affectsConfiguration('fuzzls.coverageDecorator')) {
					this.disposeTypes();
					this.createTypes(coverageDecorator(ctx.config()));
					this.renderAll();
				}
			}),
		);
	}

	get isVisible(): boolean {
		return this.visible;
	}

	toggle(show = !this.visible): void {
		this.visible = show;
		void this.ctx.extension.workspaceState.update(visibleKey, show);
		void vscode.commands.executeCommand('setContext', visibleKey, show);
		this.renderAll();
		this.visibilityEmitter.fire(show);
	}

	private createTypes(d: CoverageDecorator): void {
		const highlight = d.type === 'highlight' || d.type === 'both';
		const gutter = d.type === 'gutter' || d.type === 'both';
		const media = (f: string) => vscode.Uri.joinPath(this.ctx.extension.extensionUri, 'media', f);
		this.covered = vscode.window.createTextEditorDecorationType({
			backgroundColor: highlight ? d.coveredHighlightColor : undefined,
			gutterIconPath: gutter ? media('covered.svg') : undefined,
			gutterIconSize: 'contain',
			overviewRulerColor: d.coveredHighlightColor,
			overviewRulerLane: vscode.OverviewRulerLane.Left,
			rangeBehavior: vscode.DecorationRangeBehavior.ClosedOpen,
		});
		this.uncovered = vscode.window.createTextEditorDecorationType({
			backgroundColor: highlight ? d.uncoveredHighlightColor : undefined,
			gutterIconPath: gutter ? media('uncovered.svg') : undefined,
			gutterIconSize: 'contain',
			overviewRulerColor: d.uncoveredHighlightColor,
			overviewRulerLane: vscode.OverviewRulerLane.Right,
			rangeBehavior: vscode.DecorationRangeBehavior.ClosedOpen,
		});
		const changedColor = new vscode.ThemeColor('editorWarning.foreground');
		this.uncoveredChanged = vscode.window.createTextEditorDecorationType({
			backgroundColor: highlight ? d.uncoveredHighlightColor : undefined,
			border: '1px dashed',
			borderColor: changedColor,
			gutterIconPath: gutter ? media('uncovered.svg') : undefined,
			gutterIconSize: 'contain',
			overviewRulerColor: changedColor,
			overviewRulerLane: vscode.OverviewRulerLane.Right,
			rangeBehavior: vscode.DecorationRangeBehavior.ClosedOpen,
		});
		this.decorator = d;
	}

	private renderUris(uris: Set<string>): void {
		for (const ed of vscode.window.visibleTextEditors) {
			if (uris.has(ed.document.uri.toString())) {
				this.render(ed);
			}
		}
	}

	private renderAll(): void {
		for (const ed of vscode.window.visibleTextEditors) {
			this.render(ed);
		}
	}

	private render(ed: vscode.TextEditor): void {
		const d = this.decorator;
		if (!this.visible || !d) {
			ed.setDecorations(this.covered, []);
			ed.setDecorations(this.uncovered, []);
			ed.setDecorations(this.uncoveredChanged, []);
			return;
		}
		const fr = this.ctx.coverage.forFile(ed.document.uri.toString());
		ed.setDecorations(this.covered, d.showCovered ? fr.covered.map(toVscode) : []);
		ed.setDecorations(this.uncovered, d.showUncovered ? fr.uncovered.map(toVscode) : []);
		// Changed code is what the user is working on: shown even when the
		// decorator hides the other uncovered blocks.
		ed.setDecorations(this.uncoveredChanged, fr.uncoveredChanged.map(toVscode));
	}

	private disposeTypes(): void {
		this.covered.dispose();
		this.uncovered.dispose();
		this.uncoveredChanged.dispose();
	}

	dispose(): void {
		this.disposeTypes();
		this.visibilityEmitter.dispose();
		for (const x of this.disposables) {
			x.dispose();
		}
	}
}

export function toVscode(r: Range): vscode.Range {
	return new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
}
