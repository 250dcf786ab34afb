// Crashes as the daemon publishes them (diagnostics whose data is a CrashData),
// and "Show crash input": the minimized input in a read-only editor, served by a
// TextDocumentContentProvider under the fuzzls-input: scheme. The lightbulb on a
// crash offers it next to the daemon's own code actions.

import * as vscode from 'vscode';
import type { FuzzlsContext } from './context';
import { CommandShowInput, type CrashData, type ShowInputResult } from './protocol';

export const inputScheme = 'fuzzls-input';

export interface Crash {
	uri: vscode.Uri;
	diagnostic: vscode.Diagnostic;
	data: CrashData;
}

export function isCrashData(x: unknown): x is CrashData {
	if (!x || typeof x !== 'object') {
		return false;
	}
	const o = x as Record<string, unknown>;
	return typeof o.crash === 'string' && typeof o.input === 'string' && !!o.target && typeof o.target === 'object';
}

/** crashData returns the CrashData the language client kept on a diagnostic. */
export function crashData(d: vscode.Diagnostic): CrashData | undefined {
	const data = (d as { data?: unknown }).data;
	return d.source === 'fuzzls' && isCrashData(data) ? data : undefined;
}

/** crashes lists every crash diagnostic the daemon published. */
export function crashes(): Crash[] {
	const out: Crash[] = [];
	for (const [uri, diags] of vscode.languages.getDiagnostics()) {
		for (const diagnostic of diags) {
			const data = crashData(diagnostic);
			if (data) {
				out.push({ uri, diagnostic, data });
			}
		}
	}
	return out;
}

/** inputUri names the read-only document of a crash's input. */
export function inputUri(d: CrashData): vscode.Uri {
	return vscode.Uri.from({ scheme: inputScheme, path: `/${d.target.name}/${d.crash}`, query: d.target.package });
}

export class CrashInputs implements vscode.TextDocumentContentProvider, vscode.CodeActionProvider, vscode.Disposable {
	private readonly inputs = new Map<string, string>(); // crash id → input
	private readonly changed = new vscode.EventEmitter<vscode.Uri>();
	readonly onDidChange = this.changed.event;
	private readonly disposables: vscode.Disposable[] = [];

	constructor(private readonly ctx: FuzzlsContext) {
		this.disposables.push(
			vscode.workspace.registerTextDocumentContentProvider(inputScheme, this),
			vscode.languages.registerCodeActionsProvider({ scheme: 'file', language: 'go' }, this, {
				providedCodeActionKinds: [vscode.CodeActionKind.QuickFix],
			}),
			vscode.commands.registerCommand('fuzzls.showCrashInput', (arg?: unknown) => this.show(arg)),
			// A minimized input replaces the first one: refresh open input documents.
			vscode.languages.onDidChangeDiagnostics(() => {
				for (const c of crashes()) {
					const old = this.inputs.get(c.data.crash);
					if (old !== undefined && c.data.input !== '' && old !== c.data.input) {
						this.inputs.set(c.data.crash, c.data.input);
						this.changed.fire(inputUri(c.data));
					}
				}
			}),
		);
	}

	async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
		const id = uri.path.split('/').pop() ?? '';
		// An input the diagnostic does not carry (too long: "") is asked for.
		const known = this.inputs.get(id) || crashes().find((c) => c.data.crash === id)?.data.input;
		if (known) {
			return known;
		}
		try {
			const res = await this.ctx.daemon.command<ShowInputResult>(CommandShowInput, { crash: id });
			return res.input;
		} catch (err) {
			return `# fuzzls: the input of crash ${id} is not known: ${String(err)}\n`;
		}
	}

	provideCodeActions(_doc: vscode.TextDocument, _range: vscode.Range, context: vscode.CodeActionContext): vscode.CodeAction[] {
		const out: vscode.CodeAction[] = [];
		for (const d of context.diagnostics) {
			const data = crashData(d);
			if (!data) {
				continue;
			}
			const a = new vscode.CodeAction(`Show the crashing input of ${data.target.name}`, vscode.CodeActionKind.QuickFix);
			a.diagnostics = [d];
			a.command = { command: 'fuzzls.showCrashInput', title: 'Show crash input', arguments: [data] };
			out.push(a);
		}
		return out;
	}

	/**
	 * show opens a crash's input. arg is a CrashData, a diagnostic or a Crash; without
	 * one, the crash under the cursor, else a pick among all crashes.
	 */
	async show(arg?: unknown): Promise<void> {
		let data = resolveArg(arg);
		if (!data) {
			const ed = vscode.window.activeTextEditor;
			const all = crashes();
			const here = ed && all.find((c) => c.uri.toString() === ed.document.uri.toString() && c.diagnostic.range.contains(ed.selection.active));
			if (here) {
				data = here.data;
			} else if (all.length === 1) {
				data = all[0].data;
			} else if (all.length > 1) {
				const pick = await vscode.window.showQuickPick(
					all.map((c) => ({ label: c.data.target.name, description: c.diagnostic.message.split('\n')[0], detail: vscode.workspace.asRelativePath(c.uri), crash: c })),
					{ placeHolder: 'Which crash?' },
				);
				data = pick?.crash.data;
			} else {
				void vscode.window.showInformationMessage('fuzzls: no crash found yet.');
				return;
			}
		}
		if (!data) {
			return;
		}
		if (data.input !== '') {
			this.inputs.set(data.crash, data.input);
		}
		const doc = await vscode.workspace.openTextDocument(inputUri(data));
		await vscode.window.showTextDocument(doc, { preview: true, viewColumn: vscode.ViewColumn.Beside });
	}

	dispose(): void {
		this.changed.dispose();
		for (const d of this.disposables) {
			d.dispose();
		}
	}
}

function resolveArg(arg: unknown): CrashData | undefined {
	if (isCrashData(arg)) {
		return arg;
	}
	if (arg instanceof vscode.Diagnostic) {
		return crashData(arg);
	}
	if (arg && typeof arg === 'object' && 'data' in arg && isCrashData(arg.data)) {
		return (arg as { data: CrashData }).data;
	}
	return undefined;
}
