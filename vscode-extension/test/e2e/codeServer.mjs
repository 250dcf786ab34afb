// Running a real VS Code (code-server) for the end-to-end test and the demo, per
// shared/notes/vscode-e2e.md: Node 24 and code-server from the cache that
// scripts/e2e-setup.sh fills, every home-folder write inside one folder, the
// workbench kept quiet, bound to 127.0.0.1 on a free port.
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export const extDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const repoRoot = path.resolve(extDir, '..');
export const cacheDir = process.env.FUZZLS_E2E_CACHE || path.join(os.homedir(), '.cache', 'fuzzls-e2e');

export const quietSettings = {
	'workbench.startupEditor': 'none',
	'chat.disableAIFeatures': true,
	'workbench.secondarySideBar.defaultVisibility': 'hidden',
	'extensions.autoCheckUpdates': false,
	'extensions.autoUpdate': 'off',
	'telemetry.telemetryLevel': 'off',
	'update.mode': 'none',
	'workbench.enableExperiments': false,
	'security.workspace.trust.enabled': false,
	'git.enabled': false,
	'workbench.tips.enabled': false,
	'workbench.welcomePage.walkthroughs.openOnInstall': false,
};

export function tools() {
	const node = path.join(cacheDir, 'node24', 'node_modules', 'node', 'bin', 'node');
	const entry = path.join(cacheDir, 'code-server', 'node_modules', 'code-server', 'out', 'node', 'entry.js');
	const playwright = path.join(cacheDir, 'playwright', 'node_modules', 'playwright-core', 'index.js');
	for (const [what, p] of [['Node 24', node], ['code-server', entry], ['playwright-core', playwright]]) {
		if (!fs.existsSync(p)) {
			throw new Error(`${what} is not installed at ${p}: run scripts/e2e-setup.sh first`);
		}
	}
	return { node, entry, playwright };
}

/** freePort asks the kernel for a free port on 127.0.0.1. */
export function freePort() {
	return new Promise((resolve, reject) => {
		const srv = net.createServer();
		srv.on('error', reject);
		srv.listen(0, '127.0.0.1', () => {
			const { port } = srv.address();
			srv.close(() => resolve(port));
		});
	});
}

/** layout makes the folders of one run under dir and returns their paths and env. */
export function layout(dir, extraSettings = {}) {
	const d = {
		dir,
		user: path.join(dir, 'user-data'),
		extensions: path.join(dir, 'extensions'),
		xdgConfig: path.join(dir, 'xdg', 'config'),
		xdgData: path.join(dir, 'xdg', 'data'),
		xdgCache: path.join(dir, 'xdg', 'cache'),
		browser: path.join(dir, 'chromium'),
		log: path.join(dir, 'code-server.log'),
	};
	for (const p of [d.user, d.extensions, d.xdgConfig, d.xdgData, d.xdgCache, d.browser, path.join(d.user, 'User')]) {
		fs.mkdirSync(p, { recursive: true });
	}
	fs.writeFileSync(path.join(d.user, 'User', 'settings.json'), JSON.stringify({ ...quietSettings, ...extraSettings }, null, 2));
	// Keep Go's caches where they were (XDG_CACHE_HOME moves them otherwise, and a
	// cold build cache makes the first build slow).
	let goEnv = {};
	try {
		goEnv = JSON.parse(execFileSync('go', ['env', '-json', 'GOCACHE', 'GOMODCACHE', 'GOPATH', 'GOROOT'], { encoding: 'utf8' }));
	} catch {
		// No go: the daemon will say so.
	}
	// The extension host takes PATH from a login shell of HOME, as a user's VS Code
	// does; a HOME of the run's own whose profile puts this go first keeps the test
	// from depending on the machine's HOME (a fresh one has no profile at all).
	d.home = path.join(dir, 'home');
	fs.mkdirSync(d.home, { recursive: true });
	if (goEnv.GOROOT) {
		const profile = `export PATH="${path.join(goEnv.GOROOT, 'bin')}:${path.join(goEnv.GOPATH ?? '', 'bin')}:$PATH"\n`;
		for (const f of ['.profile', '.bash_profile', '.bashrc', '.zshenv']) {
			fs.writeFileSync(path.join(d.home, f), profile);
		}
	}
	delete goEnv.GOROOT;
	d.env = {
		...process.env,
		...goEnv,
		HOME: d.home,
		XDG_CONFIG_HOME: d.xdgConfig,
		XDG_DATA_HOME: d.xdgData,
		XDG_CACHE_HOME: d.xdgCache,
	};
	return d;
}

/** copyWorkspace copies a folder (a testdata example) to dest. */
export function copyWorkspace(src, dest) {
	fs.cpSync(src, dest, { recursive: true });
	return dest;
}

/** installExtension installs a .vsix into the layout's extensions folder. */
export function installExtension(d, vsix) {
	const { node, entry } = tools();
	execFileSync(node, [entry, '--install-extension', vsix, '--extensions-dir', d.extensions, '--user-data-dir', d.user, '--force'], {
		env: withNode24(d.env, node),
		stdio: ['ignore', 'pipe', 'pipe'],
	});
}

function withNode24(env, node) {
	return { ...env, PATH: `${path.dirname(node)}${path.delimiter}${env.PATH ?? ''}` };
}

/**
 * startCodeServer starts code-server on 127.0.0.1:port in its own process group,
 * waits for /healthz and returns {url, stop}.
 */
export async function startCodeServer(d, folder, port) {
	const { node, entry } = tools();
	const out = fs.openSync(d.log, 'a');
	const child = spawn(
		node,
		[entry, '--bind-addr', `127.0.0.1:${port}`, '--auth', 'none', '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust',
			'--user-data-dir', d.user, '--extensions-dir', d.extensions, folder],
		{ env: withNode24(d.env, node), detached: true, stdio: ['ignore', out, out] },
	);
	const pgid = child.pid;
	let exited = false;
	child.on('exit', () => {
		exited = true;
	});
	const stop = () => {
		if (!exited) {
			try {
				process.kill(-pgid, 'SIGTERM');
			} catch {
				// already gone
			}
		}
	};
	const base = `http://127.0.0.1:${port}`;
	const deadline = Date.now() + 60000;
	for (;;) {
		if (exited) {
			throw new Error(`code-server exited; see ${d.log}`);
		}
		try {
			const r = await fetch(`${base}/healthz`);
			if (r.ok) {
				break;
			}
		} catch {
			// not yet
		}
		if (Date.now() > deadline) {
			stop();
			throw new Error(`code-server did not answer on ${base} within 60 s; see ${d.log}`);
		}
		await new Promise((r) => setTimeout(r, 250));
	}
	return { url: `${base}/?folder=${encodeURIComponent(folder)}`, base, pid: pgid, stop };
}
