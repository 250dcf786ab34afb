// The launch configuration of "Debug this crash". No VS Code dependency.

import type { DebugResult } from './protocol';

/** debugType is the extension's own debug type: Delve's DAP server (`dlv dap`), for when vscode-go is not installed. */
export const debugType = 'fuzzls-dlv';

/** The launch configuration: what VS Code's DebugConfiguration holds. */
export interface LaunchConfig {
	type: string;
	request: 'launch';
	name: string;
	mode: 'test';
	/** The target's package directory: Delve builds its test binary there. */
	program: string;
	/** The test binary's arguments: the crash's seed alone. */
	args: string[];
	/** go build's flags of the build that found the crash, as one string (Delve's and vscode-go's buildFlags). */
	buildFlags: string;
	cwd: string;
	/** The dlv to run (fuzzls-dlv only): the daemon's find, else dlv on PATH. */
	dlvPath?: string;
}

/**
 * debugConfiguration is the launch configuration that runs the crash's seed
 * alone under Delve in test mode: vscode-go's `go` type when it is installed
 * (goExtension), else the extension's own type.
 */
export function debugConfiguration(res: DebugResult, goExtension: boolean): LaunchConfig {
	// The daemon's --build-flags argument is already quoted for Delve's parser.
	const buildFlags = (res.args ?? []).find((a) => a.startsWith('--build-flags='))?.slice('--build-flags='.length) ?? '';
	const config: LaunchConfig = {
		type: goExtension ? 'go' : debugType,
		request: 'launch',
		name: `Debug ${res.target.name}'s crash (seed ${res.seed})`,
		mode: 'test',
		program: res.dir,
		args: ['-test.run', res.run],
		buildFlags,
		cwd: res.dir,
	};
	if (!goExtension) {
		config.dlvPath = res.dlv || 'dlv';
	}
	return config;
}

/** listeningAt reads the address from `dlv dap`'s first line ("DAP server listening at: 127.0.0.1:41234"). */
export function listeningAt(out: string): { host: string; port: number } | undefined {
	const m = /DAP server listening at: \[?([^\s\]]+?)\]?:(\d+)\s/.exec(out);
	return m ? { host: m[1] ?? '127.0.0.1', port: Number(m[2]) } : undefined;
}
