// The entry point: activate builds the context and one object per feature, then
// starts the daemon. Fuzzing runs the workspace's code, so package.json declares
// that the extension does not run in untrusted workspaces at all.

import * as vscode from 'vscode';
import { Charts } from './chart';
import { Daemon } from './client';
import { FuzzlsContext } from './context';
import { CoverageDecorations } from './coverage';
import { CrashInputs } from './crashInput';
import { CrashDebugger } from './debug';
import { FuzzingView } from './fuzzingView';
import { StatusBar } from './status';
import { FuzzTests } from './testing';

let daemon: Daemon | undefined;

export function activate(extension: vscode.ExtensionContext): void {
	const ctx = new FuzzlsContext(extension);
	ctx.log(`activating fuzzls ${String((extension.extension.packageJSON as { version?: string }).version)} in ${vscode.env.appName} ${vscode.version}`);
	daemon = new Daemon(ctx);
	ctx.daemon = daemon;
	const coverage = new CoverageDecorations(ctx);
	extension.subscriptions.push(
		ctx,
		daemon,
		coverage,
		new StatusBar(ctx, coverage),
		new FuzzingView(ctx),
		new CrashInputs(ctx),
		new CrashDebugger(ctx),
		new FuzzTests(ctx),
		new Charts(ctx),
		vscode.commands.registerCommand('fuzzls.showLog', () => ctx.output.show(true)),
		vscode.commands.registerCommand('fuzzls.restartDaemon', () => daemon?.restart()),
	);
	void daemon.start();
}

export async function deactivate(): Promise<void> {
	await daemon?.stop();
	daemon = undefined;
}
