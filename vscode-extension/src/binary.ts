// Finding the fuzzls binary: the fuzzls.path setting, else the one shipped in the
// extension for this platform, else `fuzzls` on PATH. No VS Code dependency.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { expandHome } from './config';

export interface BinaryChoice {
	command: string;
	/** Where it came from, for the log. */
	source: 'setting' | 'bundled' | 'PATH';
}

/** platformDir is the folder name under bin/ for a platform, as vsce's targets name them. */
export function platformDir(platform: NodeJS.Platform = process.platform, arch: string = process.arch): string {
	const os = platform === 'win32' ? 'win32' : platform;
	return `${os}-${arch}`;
}

export function exeName(platform: NodeJS.Platform = process.platform): string {
	return platform === 'win32' ? 'fuzzls.exe' : 'fuzzls';
}

function isFile(p: string): boolean {
	try {
		return fs.statSync(p).isFile();
	} catch {
		return false;
	}
}

/**
 * ensureExecutable sets the execute bits of a bundled binary that lost them (an
 * unzip that drops file modes); errors are left to the spawn that follows.
 */
export function ensureExecutable(p: string, platform: NodeJS.Platform = process.platform): void {
	if (platform === 'win32') {
		return; // no execute bits: a .exe runs
	}
	try {
		fs.accessSync(p, fs.constants.X_OK);
	} catch {
		try {
			fs.chmodSync(p, 0o755);
		} catch {
			// reported when the client fails to start it
		}
	}
}

/**
 * findBinary chooses the daemon binary. setting is fuzzls.path (a leading ~ is the
 * home folder); extensionPath is the extension's installation folder; platform and
 * arch are the host's (parameters for tests): on Windows the bundled binary is
 * bin\win32-x64\fuzzls.exe and the one on PATH fuzzls.exe.
 */
export function findBinary(
	setting: string,
	extensionPath: string,
	exists: (p: string) => boolean = isFile,
	platform: NodeJS.Platform = process.platform,
	arch: string = process.arch,
): BinaryChoice {
	const s = setting.trim();
	if (s !== '') {
		return { command: expandHome(s), source: 'setting' };
	}
	const p = platform === 'win32' ? path.win32 : path.posix;
	const bundled = p.join(extensionPath, 'bin', platformDir(platform, arch), exeName(platform));
	if (exists(bundled)) {
		return { command: bundled, source: 'bundled' };
	}
	return { command: exeName(platform), source: 'PATH' };
}
