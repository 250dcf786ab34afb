// The language client that runs `fuzzls serve`: starting it with the settings as
// initializationOptions, telling it about setting changes, routing our custom
// notifications into the FuzzlsContext, and restarting it (a few times, saying so)
// when it dies. Code lenses, diagnostics, code actions and hovers come through the
// client unchanged.

import * as vscode from 'vscode';
import {
	CloseAction,
	DidChangeConfigurationNotification,
	ErrorAction,
	ExecuteCommandRequest,
	LanguageClient,
	RevealOutputChannelOn,
	State,
	type ErrorHandler,
	type LanguageClientOptions,
	type ServerOptions,
} from 'vscode-languageclient/node';
import { ensureExecutable, findBinary } from './binary';
import { daemonSettings, didChangeConfigurationSettings, restartSettings, section } from './config';
import type { DaemonHandle, FuzzlsContext } from './context';
import { CommandDebugCrash, CommandStart, MethodCoverage, MethodStatus, StateBuilding, StateFuzzing, type CoverageParams, type DebugArgs, type DebugResult, type StatusParams, type TargetArgs } from './protocol';

/** At most this many unexpected exits within restartWindowMs are restarted. */
const maxRestarts = 5;
const restartWindowMs = 3 * 60 * 1000;

export class Daemon implements DaemonHandle, vscode.Disposable {
	private client: LanguageClient | undefined;
	private exits: number[] = [];
	private stopping = false;
	/** Set between an unexpected exit and the restarted daemon running: what to say then. */
	private restarted: { count: number; lost: TargetArgs[] } | undefined;
	private readonly disposables: vscode.Disposable[] = [];

	constructor(private readonly ctx: FuzzlsContext) {
		this.disposables.push(vscode.workspace.onDidChangeConfiguration((e) => this.configurationChanged(e)));
	}

	get running(): boolean {
		return this.client?.state === State.Running;
	}

	async command<R = unknown>(name: string, arg?: object): Promise<R> {
		if (!this.client || !this.running) {
			throw new Error('the fuzzls daemon is not running');
		}
		return this.client.sendRequest(ExecuteCommandRequest.type, { command: name, arguments: arg === undefined ? [] : [arg] }) as Promise<R>;
	}

	async start(): Promise<void> {
		const ctx = this.ctx;
		const bin = findBinary(ctx.config()('path', ''), ctx.extension.extensionPath);
		if (bin.source === 'bundled') {
			ensureExecutable(bin.command);
		}
		ctx.log(`starting daemon: ${bin.command} serve (${bin.source === 'setting' ? 'fuzzls.path' : bin.source})`);
		const serverOptions: ServerOptions = { command: bin.command, args: ['serve'] };
		const clientOptions: LanguageClientOptions = {
			documentSelector: [
				{ scheme: 'file', language: 'go' },
				{ scheme: 'file', pattern: '**/{go.mod,go.sum,go.work}' },
			],
			outputChannel: ctx.output,
			traceOutputChannel: ctx.trace,
			revealOutputChannelOn: RevealOutputChannelOn.Never,
			diagnosticCollectionName: 'fuzzls',
			initializationOptions: () => daemonSettings(ctx.config()),
			// No file watcher of our own: the daemon watches the workspace, or asks
			// for the client's file events where its OS makes that better
			// (daemon/watcher.go); one here would send each event a second time.
			middleware: {
				// "Debug this crash" (code action, code lens): the daemon saves the seed
				// and answers; the debug session starts here, so it need not print the
				// command line.
				executeCommand: async (command, args: unknown[], next): Promise<unknown> => {
					if (command !== CommandDebugCrash) {
						return (await next(command, args)) as unknown;
					}
					const arg: DebugArgs = { ...(args[0] as DebugArgs), launch: true };
					const res = (await next(command, [arg])) as DebugResult | undefined;
					if (res) {
						await ctx.debugCrash(res);
					}
					return res;
				},
			},
			errorHandler: this.errorHandler(),
		};
		const client = new LanguageClient('fuzzls', 'fuzzls', serverOptions, clientOptions);
		client.onNotification(MethodStatus, (p: StatusParams) => ctx.setStatus(p));
		client.onNotification(MethodCoverage, (p: CoverageParams) => ctx.setCoverage(p));
		client.onDidChangeState((e) => {
			if (e.newState === State.Running) {
				ctx.log('daemon running');
				ctx.reset();
				this.announceRestart();
			} else if (e.newState === State.Stopped) {
				ctx.log('daemon stopped');
				// Its sessions and coverage are gone with it (test runs end, the status
				// bar says so), whether or not it restarts.
				ctx.reset();
			}
		});
		this.client = client;
		this.stopping = false;
		try {
			await client.start();
		} catch (err) {
			const msg = err instanceof Error ? err.message : String(err);
			ctx.log(`could not start the daemon: ${msg}`);
			void vscode.window
				.showErrorMessage(`fuzzls: could not start the daemon (${bin.command}): ${msg}. Set fuzzls.path or reinstall the extension.`, 'Show log', 'Open settings')
				.then((choice) => {
					if (choice === 'Show log') {
						ctx.output.show(true);
					} else if (choice === 'Open settings') {
						void vscode.commands.executeCommand('workbench.action.openSettings', 'fuzzls.path');
					}
				});
		}
	}

	async stop(): Promise<void> {
		this.stopping = true;
		const c = this.client;
		this.client = undefined;
		if (c) {
			try {
				await c.stop(2000);
			} catch (err) {
				this.ctx.log(`stopping the daemon: ${String(err)}`);
			}
			await c.dispose().catch(() => undefined);
		}
	}

	async restart(): Promise<void> {
		await this.stop();
		this.exits = [];
		await this.start();
	}

	private errorHandler(): ErrorHandler {
		return {
			error: (_err, _msg, count) => ({ action: (count ?? 0) <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown, handled: true }),
			closed: () => {
				if (this.stopping) {
					return { action: CloseAction.DoNotRestart, handled: true };
				}
				const now = Date.now();
				this.exits = this.exits.filter((t) => now - t < restartWindowMs);
				this.exits.push(now);
				if (this.exits.length <= maxRestarts) {
					// Called before the client leaves the Running state: the last status
					// still lists what was fuzzing.
					const lost = (this.ctx.status?.sessions ?? [])
						.filter((s) => s.state === StateFuzzing || s.state === StateBuilding)
						.map((s) => ({ uri: s.uri || undefined, target: s.name }));
					this.restarted = { count: this.exits.length, lost };
					this.ctx.log(`the daemon stopped unexpectedly; restarting it (${this.exits.length}/${maxRestarts})`);
					return { action: CloseAction.Restart, handled: true };
				}
				const msg = `fuzzls: the daemon stopped ${this.exits.length} times in ${restartWindowMs / 60000} minutes; it will not be restarted.`;
				this.ctx.log(msg);
				void vscode.window.showErrorMessage(msg, 'Show log', 'Restart').then((c) => {
					if (c === 'Show log') {
						this.ctx.output.show(true);
					} else if (c === 'Restart') {
						void this.restart();
					}
				});
				return { action: CloseAction.DoNotRestart, handled: true };
			},
		};
	}

	/** announceRestart says, once the restarted daemon runs, that it was restarted. */
	private announceRestart(): void {
		const r = this.restarted;
		this.restarted = undefined;
		if (!r) {
			return;
		}
		const n = r.lost.length;
		const names = r.lost.map((t) => t.target).join(', ');
		const msg =
			`fuzzls: the daemon stopped unexpectedly and was restarted (${r.count}/${maxRestarts} in ${restartWindowMs / 60000} minutes).` +
			(n > 0 ? ` ${names} ${n === 1 ? 'was' : 'were'} fuzzing and stopped with it.` : '');
		this.ctx.log(msg);
		const actions = n > 0 ? ['Fuzz again', 'Show log'] : ['Show log'];
		void vscode.window.showWarningMessage(msg, ...actions).then(async (c) => {
			if (c === 'Show log') {
				this.ctx.output.show(true);
			} else if (c === 'Fuzz again') {
				for (const t of r.lost) {
					await this.command(CommandStart, t).catch((err) => this.ctx.log(`fuzzls.start ${t.target}: ${String(err)}`));
				}
			}
		});
	}

	private configurationChanged(e: vscode.ConfigurationChangeEvent): void {
		if (!e.affectsConfiguration(section)) {
			return;
		}
		if (restartSettings.some((k) => e.affectsConfiguration(`${section}.${k}`))) {
			this.ctx.log('fuzzls.path changed: restarting the daemon');
			void this.restart();
			return;
		}
		if (this.client && this.running) {
			void this.client.sendNotification(DidChangeConfigurationNotification.type, {
				settings: didChangeConfigurationSettings(daemonSettings(this.ctx.config())),
			});
		}
	}

	dispose(): void {
		void this.stop();
		for (const d of this.disposables) {
			d.dispose();
		}
	}
}
