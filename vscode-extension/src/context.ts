// The one object that carries the extension's shared state, as vscode-go's
// GoExtensionContext: the daemon, the output channels, and the last state the
// daemon reported. Features get it in their constructor and subscribe to its events.

import * as vscode from 'vscode';
import { CoverageModel } from './coverageModel';
import { History } from './history';
import type { CoverageParams, DebugResult, StatusParams } from './protocol';
import { section, type Getter } from './config';

/** What features need of the daemon (client.ts implements it). */
export interface DaemonHandle {
	/** command runs workspace/executeCommand with one argument (or none). */
	command<R = unknown>(name: string, arg?: object): Promise<R>;
	readonly running: boolean;
}

export class FuzzlsContext implements vscode.Disposable {
	readonly output: vscode.OutputChannel;
	readonly trace: vscode.OutputChannel;
	readonly coverage = new CoverageModel((u) => vscode.Uri.parse(u).toString());
	readonly history = new History();
	/** The last fuzzls/status. */
	status: StatusParams | undefined;
	daemon: DaemonHandle = { command: () => Promise.reject(new Error('the fuzzls daemon is not running')), running: false };
	/** debugCrash starts a debug session from fuzzls.debugCrash's answer (debug.ts sets it). */
	debugCrash: (res: DebugResult) => Promise<void> = () => Promise.resolve();

	private readonly statusEmitter = new vscode.EventEmitter<StatusParams>();
	private readonly coverageEmitter = new vscode.EventEmitter<{ params: CoverageParams; uris: Set<string> }>();
	private readonly resetEmitter = new vscode.EventEmitter<void>();
	/** Fires after status was updated. */
	readonly onStatus = this.statusEmitter.event;
	/** Fires after the coverage model took a notification in, with the files it touched. */
	readonly onCoverage = this.coverageEmitter.event;
	/** Fires when the daemon (re)starts: earlier coverage and status are gone. */
	readonly onReset = this.resetEmitter.event;

	constructor(readonly extension: vscode.ExtensionContext) {
		this.output = vscode.window.createOutputChannel('fuzzls');
		this.trace = vscode.window.createOutputChannel('fuzzls (trace)');
	}

	/** config returns a getter of the fuzzls.* settings. */
	config(scope?: vscode.ConfigurationScope): Getter {
		const c = vscode.workspace.getConfiguration(section, scope);
		return <T>(key: string, def: T): T => c.get<T>(key, def);
	}

	setStatus(p: StatusParams): void {
		this.status = p;
		this.history.add(p, Date.now());
		this.statusEmitter.fire(p);
	}

	setCoverage(p: CoverageParams): void {
		const uris = this.coverage.update(p);
		this.coverageEmitter.fire({ params: p, uris });
	}

	reset(): void {
		this.status = undefined;
		this.coverage.clear();
		this.resetEmitter.fire();
	}

	log(line: string): void {
		this.output.appendLine(`[fuzzls extension ${new Date().toISOString().slice(11, 23)}] ${line}`);
	}

	dispose(): void {
		this.statusEmitter.dispose();
		this.coverageEmitter.dispose();
		this.resetEmitter.dispose();
		this.output.dispose();
		this.trace.dispose();
	}
}
