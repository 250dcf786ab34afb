// "Debug this crash": the daemon's fuzzls.debugCrash (from the code action or the
// code lens) saves the crash's input as a seed and answers how to run it under
// Delve; this starts that debug session with a breakpoint on the failing line.
// With vscode-go installed, through its `go` debug type; else Delve's own DAP
// server, `dlv dap`, behind the extension's debug type (TCP on the loopback:
// `dlv dap` speaks DAP over no other transport).

import { spawn, type ChildProcess } from 'node:child_process';
import * as vscode from 'vscode';
import type { FuzzlsContext } from './context';
import { debugConfiguration, debugType, listeningAt } from './debugConfig';
import type { DebugResult } from './protocol';

/** How long `dlv dap` may take to say where it listens. */
const dlvStartMs = 30000;

export class CrashDebugger implements vscode.Disposable, vscode.DebugAdapterDescriptorFactory {
	private readonly disposables: vscode.Disposable[] = [];
	private readonly dlvs = new Map<string, ChildProcess>();
	private readonly output: vscode.OutputChannel;

	constructor(private readonly ctx: FuzzlsContext) {
		this.output = vscode.window.createOutputChannel('fuzzls (Delve)');
		ctx.debugCrash = (res) => this.debug(res);
		this.disposables.push(
			this.output,
			vscode.debug.registerDebugAdapterDescriptorFactory(debugType, this),
			vscode.debug.onDidTerminateDebugSession((s) => this.dlvs.get(s.id)?.kill()),
		);
	}

	async debug(res: DebugResult): Promise<void> {
		// The seed came as an edit the editor may hold unsaved: go test reads the disk.
		const seed = vscode.workspace.textDocuments.find((d) => d.uri.toString() === vscode.Uri.parse(res.seedURI).toString());
		if (seed?.isDirty) {
			await seed.save();
		}
		const uri = vscode.Uri.parse(res.uri);
		const has = vscode.debug.breakpoints.some(
			(b) => b instanceof vscode.SourceBreakpoint && b.location.uri.toString() === uri.toString() && b.location.range.start.line === res.line,
		);
		if (!has) {
			vscode.debug.addBreakpoints([new vscode.SourceBreakpoint(new vscode.Location(uri, new vscode.Position(res.line, 0)))]);
		}
		const goExtension = vscode.extensions.getExtension('golang.go') !== undefined;
		if (!goExtension && !res.dlv) {
			void vscode.window.showErrorMessage('fuzzls: Delve is not installed: go install github.com/go-delve/delve/cmd/dlv@latest (or install the Go extension).');
			return;
		}
		const config = debugConfiguration(res, goExtension);
		this.ctx.log(`debugging ${res.target.name}'s crash: ${res.command.split('\n')[0] ?? ''}`);
		const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(res.dir));
		if (!(await vscode.debug.startDebugging(folder, { ...config }))) {
			void vscode.window.showErrorMessage(`fuzzls: the debug session did not start. By hand: ${res.command}`);
		}
	}

	async createDebugAdapterDescriptor(session: vscode.DebugSession): Promise<vscode.DebugAdapterDescriptor> {
		const cfg = session.configuration;
		const dlv = typeof cfg.dlvPath === 'string' && cfg.dlvPath !== '' ? cfg.dlvPath : 'dlv';
		const cwd = typeof cfg.cwd === 'string' ? cfg.cwd : undefined;
		const proc = spawn(dlv, ['dap', '--listen=127.0.0.1:0'], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
		this.dlvs.set(session.id, proc);
		proc.on('exit', () => this.dlvs.delete(session.id));
		proc.stderr.on('data', (d: Buffer) => this.output.append(d.toString()));
		const addr = await new Promise<{ host: string; port: number }>((resolve, reject) => {
			let out = '';
			const timer = setTimeout(() => reject(new Error(`${dlv} dap did not say where it listens within ${dlvStartMs / 1000} s`)), dlvStartMs);
			proc.stdout.on('data', (d: Buffer) => {
				// After the address, the debuggee's own output.
				this.output.append(d.toString());
				out += d.toString();
				const at = listeningAt(out);
				if (at) {
					clearTimeout(timer);
					resolve(at);
				}
			});
			proc.on('error', (err) => {
				clearTimeout(timer);
				reject(new Error(`cannot run ${dlv}: ${err.message}`));
			});
			proc.on('exit', (code) => {
				clearTimeout(timer);
				reject(new Error(`${dlv} dap exited (${String(code)}) before listening`));
			});
		});
		return new vscode.DebugAdapterServer(addr.port, addr.host);
	}

	dispose(): void {
		for (const p of this.dlvs.values()) {
			p.kill();
		}
		for (const d of this.disposables) {
			d.dispose();
		}
	}
}
