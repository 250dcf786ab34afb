// The Testing API: fuzz targets in the Test Explorer (package folder → target),
// found by reading the workspace's _test.go files. The "Fuzz" run profile starts
// the selected targets in the daemon (fuzzls.start) and stops them when the run is
// cancelled (fuzzls.stop); a target's run ends when its session does (stopped
// elsewhere, done, or gone with the daemon) and fails when it has crashes (a slow
// input is a warning), is skipped when the target skips itself. The
// "Coverage" profile shows the targets' coverage in VS Code's coverage UI: of
// every instrumented file of the workspace for a running target (asked with
// fuzzls.coverage: notifications carry only its package and the open files),
// else the last fuzzls/coverage.

import * as path from 'node:path';
import * as vscode from 'vscode';
import type { FuzzlsContext } from './context';
import { crashes } from './crashInput';
import { CommandCoverage, CommandStart, CommandStop, KindSlow, StateError, StateFuzzing, StateSkipped, StateStopped, type CoverageParams, type SessionStatus, type TargetArgs, type TargetID } from './protocol';
import { sessionLine } from './statusModel';
import { findFuzzTargets } from './targets';
import { toVscode } from './coverage';

const exclude = '**/{vendor,node_modules,testdata,.git}/**';

export class FuzzTests implements vscode.Disposable {
	readonly controller: vscode.TestController;
	private readonly disposables: vscode.Disposable[] = [];
	private readonly details = new WeakMap<vscode.FileCoverage, vscode.FileCoverageDetail[]>();

	constructor(private readonly ctx: FuzzlsContext) {
		const c = vscode.tests.createTestController('fuzzls', 'Fuzz targets');
		this.controller = c;
		c.refreshHandler = () => this.discover();
		c.createRunProfile('Fuzz', vscode.TestRunProfileKind.Run, (req, tok) => this.fuzz(req, tok), true);
		const cov = c.createRunProfile('Corpus coverage', vscode.TestRunProfileKind.Coverage, (req) => void this.coverage(req), true);
		cov.loadDetailedCoverage = (_run, fc) => Promise.resolve(this.details.get(fc) ?? []);
		const w = vscode.workspace.createFileSystemWatcher('**/*_test.go');
		this.disposables.push(
			c,
			w,
			w.onDidCreate((u) => this.parseFile(u)),
			w.onDidChange((u) => this.parseFile(u)),
			w.onDidDelete((u) => this.removeFile(u)),
			vscode.workspace.onDidChangeWorkspaceFolders(() => this.discover()),
		);
		void this.discover();
	}

	async discover(): Promise<void> {
		const files = await vscode.workspace.findFiles('**/*_test.go', exclude, 5000);
		await Promise.all(files.map((u) => this.parseFile(u)));
	}

	private packageItem(file: vscode.Uri): vscode.TestItem {
		const dir = vscode.Uri.file(path.dirname(file.fsPath));
		const id = dir.toString();
		let it = this.controller.items.get(id);
		if (!it) {
			const rel = vscode.workspace.asRelativePath(dir, false);
			it = this.controller.createTestItem(id, rel === dir.fsPath ? path.basename(dir.fsPath) : rel || '.', dir);
			this.controller.items.add(it);
		}
		return it;
	}

	private async parseFile(file: vscode.Uri): Promise<void> {
		if (/\/(vendor|node_modules|testdata|\.git)\//.test(file.path)) {
			return;
		}
		let text: string;
		try {
			text = new TextDecoder().decode(await vscode.workspace.fs.readFile(file));
		} catch {
			this.removeFile(file);
			return;
		}
		const found = findFuzzTargets(text);
		const pkg = this.packageItem(file);
		const prefix = `${file.toString()}#`;
		const keep = new Set<string>();
		for (const t of found) {
			const id = prefix + t.name;
			keep.add(id);
			const it = pkg.children.get(id) ?? this.controller.createTestItem(id, t.name, file);
			it.range = new vscode.Range(t.line, 0, t.line, 0);
			pkg.children.add(it);
		}
		pkg.children.forEach((it) => {
			if (it.id.startsWith(prefix) && !keep.has(it.id)) {
				pkg.children.delete(it.id);
			}
		});
		if (pkg.children.size === 0) {
			this.controller.items.delete(pkg.id);
		}
	}

	private removeFile(file: vscode.Uri): void {
		const prefix = `${file.toString()}#`;
		this.controller.items.forEach((pkg) => {
			pkg.children.forEach((it) => {
				if (it.id.startsWith(prefix)) {
					pkg.children.delete(it.id);
				}
			});
			if (pkg.children.size === 0) {
				this.controller.items.delete(pkg.id);
			}
		});
	}

	/** targetsOf expands a request into target items (the leaves). */
	private targetsOf(req: vscode.TestRunRequest): vscode.TestItem[] {
		const out: vscode.TestItem[] = [];
		const skip = new Set((req.exclude ?? []).map((t) => t.id));
		const add = (it: vscode.TestItem) => {
			if (skip.has(it.id)) {
				return;
			}
			if (it.children.size === 0 && it.id.includes('#')) {
				out.push(it);
			}
			it.children.forEach(add);
		};
		if (req.include) {
			req.include.forEach(add);
		} else {
			this.controller.items.forEach(add);
		}
		return out;
	}

	private static argsOf(it: vscode.TestItem): TargetArgs {
		return { uri: it.uri?.toString(), target: it.label };
	}

	/** sessionOf finds the daemon's session of a target item. */
	private sessionOf(it: vscode.TestItem): SessionStatus | undefined {
		const uri = it.uri?.toString();
		const dir = it.uri ? path.dirname(it.uri.fsPath) : '';
		return this.ctx.status?.sessions?.find(
			(s) => s.name === it.label && (!s.uri || vscode.Uri.parse(s.uri).toString() === uri || path.dirname(vscode.Uri.parse(s.uri).fsPath) === dir),
		);
	}

	private async fuzz(req: vscode.TestRunRequest, token: vscode.CancellationToken): Promise<void> {
		const run = this.controller.createTestRun(req, 'Fuzz', false);
		// present: the daemon's status listed the session; fuzzed: it was fuzzing once; last: its last status.
		const pending = new Map<string, { item: vscode.TestItem; started: number; present: boolean; fuzzed: boolean; lastLog: number; last?: SessionStatus }>();
		const running = (s: SessionStatus | undefined) => s !== undefined && s.state !== StateStopped && s.state !== StateError && s.state !== StateSkipped;
		for (const it of this.targetsOf(req)) {
			run.started(it);
			try {
				await this.ctx.daemon.command(CommandStart, FuzzTests.argsOf(it));
				// The daemon sends a status with the new session before it answers.
				const s = this.sessionOf(it);
				pending.set(it.id, { item: it, started: Date.now(), present: s !== undefined, fuzzed: s?.state === StateFuzzing, lastLog: 0, last: s });
			} catch (err) {
				run.errored(it, new vscode.TestMessage(`fuzzls.start: ${String(err)}`));
			}
		}
		/** finish ends a target's run: s is its last status, why says why it ended without one. */
		const finish = (id: string, s: SessionStatus | undefined, why?: string) => {
			const p = pending.get(id);
			if (!p) {
				return;
			}
			pending.delete(id);
			const dur = Date.now() - p.started;
			// A slow input is a warning, not a failure.
			const cs = crashes().filter((c) => c.data.kind !== KindSlow && c.data.target.name === p.item.label && (!s || c.data.target.package === s.package));
			if (s?.state === StateSkipped) {
				run.skipped(p.item);
			} else if (s?.state === StateError || why) {
				run.errored(p.item, new vscode.TestMessage(s?.message || why || 'the session failed'), dur);
			} else if (cs.length > 0 || (s?.crashes ?? 0) > 0) {
				const msgs = cs.map((c) => {
					const m = new vscode.TestMessage(c.diagnostic.message);
					m.location = new vscode.Location(c.uri, c.diagnostic.range);
					return m;
				});
				run.failed(p.item, msgs.length ? msgs : [new vscode.TestMessage(`${s?.crashes} crashes`)], dur);
			} else {
				run.passed(p.item, dur);
			}
		};
		await new Promise<void>((resolve) => {
			const subs: vscode.Disposable[] = [];
			const done = () => {
				if (pending.size === 0) {
					for (const d of subs) {
						d.dispose();
					}
					resolve();
				}
			};
			subs.push(
				this.ctx.onStatus(() => {
					const now = Date.now();
					for (const [id, p] of [...pending]) {
						const s = this.sessionOf(p.item);
						if (!s) {
							// The daemon drops a session from its status when it ends (stopped
							// from a code lens or the Fuzzing view, or done).
							if (p.fuzzed) {
								finish(id, p.last);
							} else if (p.present || now - p.started > 10000) {
								finish(id, undefined, `${p.item.label} stopped before it was fuzzing (did the build fail? See the Problems panel and the fuzzls log)`);
							}
							continue;
						}
						// A line when the state changes (building → fuzzing), else every 5 s.
						if (now - p.lastLog > 5000 || s.state !== p.last?.state) {
							p.lastLog = now;
							run.appendOutput(`${sessionLine(s)}\r\n`, undefined, p.item);
						}
						p.present = true;
						p.fuzzed ||= s.state === StateFuzzing;
						if (running(s)) {
							p.last = s;
						} else {
							finish(id, s); // the session ended by itself
						}
					}
					done();
				}),
				// The daemon died (it restarts by itself, without these sessions).
				this.ctx.onReset(() => {
					for (const [id, p] of [...pending]) {
						finish(id, undefined, `the fuzzls daemon stopped while ${p.item.label} was fuzzing; run it again`);
					}
					done();
				}),
				token.onCancellationRequested(async () => {
					for (const [id, p] of [...pending]) {
						await this.ctx.daemon.command(CommandStop, FuzzTests.argsOf(p.item)).catch(() => undefined);
						finish(id, this.sessionOf(p.item) ?? p.last);
					}
					done();
				}),
			);
			done();
		});
		run.end();
	}

	private async coverage(req: vscode.TestRunRequest): Promise<void> {
		const run = this.controller.createTestRun(req, 'Corpus coverage', false);
		const perFile = new Map<string, Map<string, vscode.StatementCoverage>>();
		for (const it of this.targetsOf(req)) {
			const s = this.sessionOf(it);
			const ids: TargetID[] = s
				? [{ package: s.package, name: s.name }]
				: this.ctx.coverage.targets().filter((t) => t.name === it.label);
			if (s && this.ctx.daemon.running) {
				try {
					this.ctx.setCoverage(await this.ctx.daemon.command<CoverageParams>(CommandCoverage, ids[0]));
				} catch (e) {
					run.appendOutput(`${it.label}: the workspace's coverage: ${String(e)}; showing the last notification's\r\n`);
				}
			}
			let any = false;
			for (const id of ids) {
				for (const [uri, fr] of this.ctx.coverage.files(id)) {
					const m = perFile.get(uri) ?? new Map<string, vscode.StatementCoverage>();
					perFile.set(uri, m);
					for (const [list, hit] of [[fr.covered, true], [fr.uncovered, false], [fr.uncoveredChanged, false]] as const) {
						for (const r of list) {
							const k = `${r.start.line}:${r.start.character}-${r.end.line}:${r.end.character}`;
							const prev = m.get(k);
							if (!prev || (hit && !prev.executed)) {
								m.set(k, new vscode.StatementCoverage(hit ? 1 : 0, toVscode(r)));
							}
							any = true;
						}
					}
				}
			}
			run.enqueued(it);
			if (any) {
				run.passed(it);
			} else {
				run.skipped(it);
				run.appendOutput(`${it.label}: no coverage yet; fuzz it first (the Fuzz profile or the "▶ Fuzz" code lens)\r\n`);
			}
		}
		for (const [uri, m] of perFile) {
			const details = [...m.values()];
			const fc = vscode.FileCoverage.fromDetails(vscode.Uri.parse(uri), details);
			this.details.set(fc, details);
			run.addCoverage(fc);
		}
		run.end();
	}

	dispose(): void {
		for (const d of this.disposables) {
			d.dispose();
		}
	}
}
