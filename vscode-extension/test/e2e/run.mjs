// End-to-end test of the extension in a real VS Code (code-server, driven in
// headless Chromium by playwright-core). It installs the packaged .vsix, opens a
// copy of testdata/calc, clicks "▶ Fuzz" above FuzzEval, waits for coverage
// highlights in calc.go and for the crash in the Problems panel, clicks the crash
// and checks that the cursor is on the panic line (the line marked `// BUG`),
// applies "Add input to seed corpus" from the lightbulb and checks the new file
// under testdata/fuzz/FuzzEval/, clicks "Debug this crash" and sees the debugger
// paused at the panic line, and saves screenshots under build/. Then the
// Testing API: FuzzEval in the Test Explorer, its "Fuzz" profile starting the
// session and its "Corpus coverage" profile filling the Test Coverage view; and a
// SIGKILL of the daemon, which restarts with a notification that offers to fuzz
// again. Last, "Why isn't this covered?" and "When to stop" on a copy of
// testdata/blockers beside calc (blockers/): the blocker's hover on the uncovered
// block, the Fuzzing view's blockers (one clicked opens the comparison) and its
// plateau text, "Generate fuzz test" on calc.go's Eval writing a Fuzz function into
// calc_test.go, and FuzzCheck stopping on its plateau once fuzzls.plateau is set.
// Then, on a copy of testdata/structs (structs/), FuzzServe, whose struct and
// TextUnmarshaler arguments go test cannot run: its lens saying so, and its crash
// in the Problems panel, at the panic line of config.go.
//
//   node test/e2e/run.mjs [path/to/fuzzls-linux-x64.vsix]
//
// Environment: FUZZLS_E2E_CACHE (see scripts/e2e-setup.sh), FUZZLS_E2E_KEEP=1 keeps
// the run's folder, FUZZLS_E2E_TIMEOUT_S (default 120) bounds each wait for the
// daemon, FUZZLS_E2E_ONLY=debug stops after "Debug this crash", FUZZLS_E2E_ONLY=blockers
// runs only the blockers part, FUZZLS_E2E_ONLY=structs only the structs part. The last
// line is "e2e: N passed, M failed".
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { copyWorkspace, extDir, freePort, installExtension, layout, repoRoot, startCodeServer, tools } from './codeServer.mjs';

const vsix = path.resolve(process.argv[2] || path.join(extDir, 'fuzzls-linux-x64.vsix'));
const waitMs = Number(process.env.FUZZLS_E2E_TIMEOUT_S || 120) * 1000;
// FUZZLS_E2E_ONLY=debug: the steps up to the crash, then "Debug this crash" alone
// (which then saves the seed itself), for working on it.
const only = process.env.FUZZLS_E2E_ONLY;
const buildDir = path.join(extDir, 'build');
const t0 = Date.now();
const secs = () => ((Date.now() - t0) / 1000).toFixed(1);

let lastShot = async () => undefined;
let passed = 0;
let failed = 0;
const cleanups = [];

async function step(name, fn) {
	const s = Date.now();
	try {
		const r = await fn();
		passed++;
		console.log(`ok   ${name} (${((Date.now() - s) / 1000).toFixed(1)} s, at ${secs()} s)`);
		return r;
	} catch (err) {
		failed++;
		console.log(`FAIL ${name} (${((Date.now() - s) / 1000).toFixed(1)} s, at ${secs()} s): ${err?.message ?? err}`);
		throw err;
	}
}

async function main() {
	const { playwright } = tools();
	const { chromium } = createRequire(import.meta.url)(playwright);
	if (!fs.existsSync(vsix)) {
		throw new Error(`no ${vsix}: run npm run package first`);
	}
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fuzzls-e2e-'));
	cleanups.push(() => (process.env.FUZZLS_E2E_KEEP ? console.log(`kept ${dir}`) : fs.rmSync(dir, { recursive: true, force: true })));
	const d = layout(dir, {
		'workbench.editor.enablePreview': false,
		'editor.lightbulb.enabled': 'on',
		'files.refactoring.autoSave': true,
		'editor.minimap.enabled': false,
	});
	const ws = copyWorkspace(path.join(repoRoot, 'testdata', 'calc'), path.join(dir, 'calc'));
	copyWorkspace(path.join(repoRoot, 'testdata', 'blockers'), path.join(ws, 'blockers'));
	copyWorkspace(path.join(repoRoot, 'testdata', 'structs'), path.join(ws, 'structs'));
	const bugLine = fs.readFileSync(path.join(ws, 'calc.go'), 'utf8').split('\n').findIndex((l) => l.includes('// BUG')) + 1;
	if (bugLine === 0) {
		throw new Error('testdata/calc/calc.go has no // BUG marker');
	}

	await step('install the .vsix', () => installExtension(d, vsix));
	const port = await freePort();
	const server = await step('start code-server', () => startCodeServer(d, ws, port));
	cleanups.push(() => server.stop());

	const browser = await chromium.launchPersistentContext(d.browser, {
		executablePath: '/usr/bin/chromium',
		headless: true,
		args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
		viewport: { width: 1400, height: 900 },
		env: d.env,
	});
	cleanups.push(() => browser.close());
	const page = browser.pages()[0] ?? (await browser.newPage());
	page.setDefaultTimeout(waitMs);
	const shot = async (name) => {
		fs.mkdirSync(buildDir, { recursive: true });
		await page.screenshot({ path: path.join(buildDir, name) });
	};
	lastShot = () => shot('e2e-last.png');

	// palette runs a command ('>Title'), opens a file ('name') or goes to a line
	// (':N') through the quick input, waiting for a matching row before Enter.
	const palette = async (text) => {
		await page.keyboard.press('F1');
		const input = page.locator('.quick-input-widget input');
		await input.waitFor({ state: 'visible' });
		await input.fill(text);
		if (!text.startsWith(':')) {
			const label = text.replace(/^>/, '').split(':').pop().trim();
			// File names come from a search that is slow while the extensions activate.
			await page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first().waitFor({ timeout: text.startsWith('>') ? 15000 : 30000 });
		}
		await page.waitForTimeout(150);
		await page.keyboard.press('Enter');
		await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 5000 }).catch(() => console.log(`     (quick input still open after "${text}")`));
	};
	const openFile = async (name) => {
		await palette(name);
		await page.locator(`.tab[data-resource-name="${name}"].active, .tab.active[aria-label^="${name}"]`).first().waitFor();
		await page.locator('.editor-instance .monaco-editor .view-lines').first().waitFor();
	};

	const fuzzingView = () => page.locator('.pane', { has: page.locator('.pane-header', { hasText: /^\s*Fuzzing\s*$/ }) }).first();
	// startTarget clicks "▶ Fuzz" above the target of file (its only one) until
	// the Fuzzing view has it in one of states, or until started shows: while
	// another target fuzzes, its lenses are asked for every second, and a click
	// can land on one that is going away. Without a lens after 10 s (asked before
	// the daemon was up, say) it starts every target.
	const startTarget = async (file, target, states = 'building|fuzzing', started = undefined) => {
		await openFile(file);
		await page.locator('.statusbar-item', { hasText: 'fuzzls' }).first().waitFor({ timeout: 30000 });
		await palette('>fuzzls: Show the Fuzzing view');
		let row = fuzzingView().locator('.monaco-list-row', { hasText: new RegExp(`${target}\\s*(${states})`) });
		row = (started ? row.or(started) : row).first();
		for (let i = 0; ; i++) {
			const lens = page.locator('.codelens-decoration a', { hasText: '▶ Fuzz' }).first();
			if (await lens.waitFor({ timeout: 10000 }).then(() => true, () => false)) {
				await lens.click();
			} else {
				console.log('     (no "▶ Fuzz" lens: starting every target)');
				await palette('>fuzzls: Start fuzzing every target');
			}
			if (await row.waitFor({ timeout: 15000 }).then(() => true, () => false)) {
				return;
			}
			if (i === 3) {
				throw new Error(`${target} is not fuzzing after four tries`);
			}
			console.log(`     (${target} not started; clicking again)`);
		}
	};

	await step('workbench loads', () => page.goto(server.url).then(() => page.locator('.monaco-workbench').waitFor({ timeout: 60000 })));
	if (only === 'blockers') {
		await blockerSteps();
		return;
	}
	if (only === 'structs') {
		await structSteps();
		return;
	}
	await step('open calc_test.go', () => openFile('calc_test.go'));
	await step('extension activates (status bar item)', () => page.locator('.statusbar-item', { hasText: 'fuzzls' }).first().waitFor({ timeout: 30000 }));
	await step('output channel shows the daemon starting', async () => {
		await palette('>fuzzls: Show daemon log');
		await page.locator('.panel .monaco-editor .view-lines', { hasText: 'starting daemon' }).first().waitFor({ timeout: 30000 });
		const text = await page.locator('.panel .monaco-editor .view-lines').first().innerText();
		console.log(`     log: ${text.split('\n').filter(Boolean).slice(0, 6).join(' | ').slice(0, 400)}`);
	});

	await step('click "▶ Fuzz" above FuzzEval', async () => {
		const lens = page.locator('.codelens-decoration a', { hasText: 'Fuzz' }).first();
		await lens.waitFor();
		await lens.click();
	});
	await step('status bar shows fuzzing', () => page.locator('.statusbar-item', { hasText: /fuzzls: .*(running|crash)/ }).first().waitFor());

	await step('coverage decorations in calc.go', async () => {
		await openFile('calc.go');
		// Decorated spans with a size (some decoration nodes are empty and hidden).
		const visibleSpans = () => [...document.querySelectorAll('.editor-instance .monaco-editor [class*="TextEditorDecorationType"]')]
			.filter((e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; }).length;
		await page.waitForFunction(visibleSpans);
		const n = await page.evaluate(visibleSpans);
		console.log(`     ${n} decorated spans visible`);
	});

	await step('crash in the Problems panel', async () => {
		await palette('>View: Focus on Problems View');
		await page.locator('.markers-panel .monaco-list-row', { hasText: /FuzzEval|panic|divide/ }).first().waitFor();
	});

	await step(`clicking the crash puts the cursor on the panic line (${bugLine})`, async () => {
		const row = page.locator('.markers-panel .monaco-list-row', { hasText: /FuzzEval|panic|divide/ }).first();
		await row.click();
		await page.keyboard.press('Enter');
		const sel = page.locator('.statusbar-item[id="status.editor.selection"]');
		await page.waitForFunction(
			(want) => /Ln (\d+)/.exec(document.querySelector('[id="status.editor.selection"]')?.textContent ?? '')?.[1] === String(want),
			bugLine,
			{ timeout: 15000 },
		).catch(async () => {
			throw new Error(`cursor at "${await sel.innerText().catch(() => '?')}", want Ln ${bugLine}`);
		});
		await page.locator('.tab.active', { hasText: 'calc.go' }).first().waitFor({ timeout: 5000 });
	});

	await shot('e2e-calc.png');

	if (!only) {
		await addToCorpus();
	}
	await step('"Debug this crash" (code lens) stops the debugger at the panic line', async () => {
		await openFile('calc.go');
		const lens = page.locator('.codelens-decoration a', { hasText: 'Debug this crash' }).first();
		await lens.waitFor({ timeout: 30000 });
		await lens.click();
		// Delve builds the test binary without optimizations first: a minute on a cold cache.
		const debugWait = Math.max(waitMs, 240000);
		await page.locator('.debug-toolbar').first().waitFor({ timeout: debugWait });
		await page.waitForFunction(() => /paused on breakpoint/i.test(document.querySelector('.debug-call-stack')?.textContent ?? ''), undefined, { timeout: debugWait })
			.catch(async () => {
				throw new Error(`call stack: ${JSON.stringify(await page.locator('.debug-call-stack').first().innerText().catch(() => '?'))}`);
			});
		// The current line, highlighted (the top stack frame's decoration), is the
		// panic line of calc.go.
		await page.locator('.editor-instance .debug-top-stack-frame-line').first().waitFor({ timeout: 15000 });
		await page.locator('.tab.active', { hasText: 'calc.go' }).first().waitFor({ timeout: 5000 });
		const highlighted = await page.evaluate(() => {
			const top = document.querySelector('.editor-instance .view-overlays .debug-top-stack-frame-line')?.parentElement?.style.top;
			const row = [...document.querySelectorAll('.editor-instance .margin-view-overlays > div')].find((d) => d.style.top === top);
			return row?.querySelector('.line-numbers')?.textContent?.trim();
		});
		if (highlighted !== String(bugLine)) {
			throw new Error(`the current-line decoration is on line ${String(highlighted)}, want ${bugLine}`);
		}
		// The goroutine paused on the breakpoint, its frames: (*parser).term in calc.go first.
		const thread = page.locator('.debug-call-stack .monaco-list-row', { hasText: /paused on breakpoint/i }).first();
		const threadText = (await thread.innerText()).replace(/\s+/g, ' ');
		const frame = page.locator('.debug-call-stack .monaco-list-row', { hasText: /term/ }).filter({ hasText: /calc\.go/ }).first();
		if (!(await frame.isVisible())) {
			await thread.locator('.monaco-tl-twistie').click();
		}
		await frame.waitFor({ timeout: 10000 }).catch(async () => {
			throw new Error(`call stack: ${JSON.stringify(await page.locator('.debug-call-stack').first().innerText().catch(() => '?'))}`);
		});
		console.log(`     paused: ${threadText}; top frame: ${(await frame.innerText()).replace(/\s+/g, ' ')}`);
		const seeds = fs.readdirSync(path.join(ws, 'testdata', 'fuzz', 'FuzzEval'));
		console.log(`     seeds: ${seeds.join(', ')}`);
		await shot('e2e-debug.png');
		await page.locator('.debug-toolbar .codicon-debug-stop').first().click();
		await page.locator('.debug-toolbar').first().waitFor({ state: 'hidden', timeout: 30000 });
	});
	if (only) {
		return;
	}

	async function addToCorpus() {
		await step('"Add input to seed corpus" writes testdata/fuzz/FuzzEval/<file>', async () => {
			const corpus = path.join(ws, 'testdata', 'fuzz', 'FuzzEval');
			const item = page.locator('.action-widget .monaco-list-row', { hasText: 'Add input to seed corpus' }).first();
			// openQuickFixes puts the cursor on the crash line (Go to Line focuses the
			// editor) and opens the quick fixes (Ctrl+.). Under load the key can land
			// before the editor has its focus back: try again, the last time through the
			// lightbulb.
			const openQuickFixes = async () => {
				await palette(`:${bugLine}`);
				for (let i = 0; ; i++) {
					if (i < 2) {
						await page.keyboard.press('Control+.');
					} else {
						await page.locator('.editor-instance .lightBulbWidget, .editor-instance .codicon-light-bulb').first().click();
					}
					try {
						await item.waitFor({ timeout: i < 2 ? 7000 : 15000 });
						return;
					} catch (err) {
						if (i === 2) {
							throw err;
						}
						console.log('     (no quick fix menu yet; again)');
						await page.keyboard.press('Escape');
					}
				}
			};
			// The crash's diagnostic is republished each time minimization shrinks its
			// input, and an open menu is rebuilt with it: a click can land on a row that
			// is going away and apply nothing (one CI run, 20 s without a file). Then
			// the menu is opened again.
			let files = [];
			for (let attempt = 0; attempt < 3 && files.length === 0; attempt++) {
				if (attempt > 0) {
					console.log('     (the click applied nothing; opening the quick fixes again)');
					await page.keyboard.press('Escape');
				}
				await openQuickFixes();
				await item.click();
				const deadline = Date.now() + 12000;
				while (Date.now() < deadline) {
					files = fs.existsSync(corpus) ? fs.readdirSync(corpus) : [];
					if (files.length > 0 && files.every((f) => fs.readFileSync(path.join(corpus, f), 'utf8').startsWith('go test fuzz v1'))) {
						break;
					}
					if (files.length > 0) {
						await palette('>File: Save All');
					}
					await new Promise((r) => setTimeout(r, 500));
				}
			}
			if (files.length === 0) {
				throw new Error(`nothing under ${corpus}`);
			}
			const content = fs.readFileSync(path.join(corpus, files[0]), 'utf8');
			if (!content.startsWith('go test fuzz v1')) {
				throw new Error(`${files[0]} does not hold a go test fuzz v1 input: ${JSON.stringify(content.slice(0, 80))}`);
			}
			console.log(`     testdata/fuzz/FuzzEval/${files[0]}: ${JSON.stringify(content)}`);
		});
	}

	await step('the Coverage status bar item hides and shows the highlights', async () => {
		const spans = () => [...document.querySelectorAll('.editor-instance .monaco-editor [class*="TextEditorDecorationType"]')]
			.filter((e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; }).length;
		await page.locator('.statusbar-item', { hasText: 'Coverage' }).first().click();
		await page.waitForFunction((f) => new Function(`return (${f})()`)() === 0, spans.toString(), { timeout: 10000 });
		await page.locator('.statusbar-item', { hasText: 'Coverage' }).first().click();
		await page.waitForFunction((f) => new Function(`return (${f})()`)() > 0, spans.toString(), { timeout: 10000 });
	});

	await step('the fuzzls status bar item opens the Fuzzing view with FuzzEval', async () => {
		await page.locator('.statusbar-item', { hasText: /fuzzls: / }).first().click();
		// Rows of the Fuzzing view itself (the Problems view is a .pane too, with FuzzEval in it).
		const view = page.locator('.pane', { has: page.locator('.pane-header', { hasText: /^\s*Fuzzing\s*$/ }) }).first();
		await view.locator('.monaco-list-row', { hasText: 'example.com/calc' }).first().waitFor({ timeout: 15000 });
		await view.locator('.monaco-list-row', { hasText: 'FuzzEval' }).first().waitFor({ timeout: 5000 });
	});

	await step('the chart opens for FuzzEval', async () => {
		await palette('>fuzzls: Show coverage and execs/s chart');
		await page.locator('.tab', { hasText: 'Fuzzing: FuzzEval' }).first().waitFor({ timeout: 30000 });
		// The webview is an iframe in an iframe: look for the chart in every frame.
		// Its first load (code-server's webview service worker) took 10 s on a green
		// run and over 15 s on another with both cores fuzzing.
		const deadline = Date.now() + 45000;
		let legend;
		while (!legend && Date.now() < deadline) {
			for (const f of page.frames()) {
				legend = await f.evaluate(() => document.querySelector('svg.fuzzls-chart polyline.coverage') && document.querySelector('svg.fuzzls-chart .legend.coverage')?.textContent).catch(() => undefined);
				if (legend) {
					break;
				}
			}
			await page.waitForTimeout(250);
		}
		if (!legend) {
			throw new Error('no chart (svg.fuzzls-chart with a coverage line) in the webview');
		}
		console.log(`     chart: ${legend}`);
	});
	await shot('e2e-views.png');

	// The Testing API: FuzzEval in the Test Explorer, its "Fuzz" profile, and the
	// "Corpus coverage" profile in VS Code's own coverage UI.
	const testRow = (level, label) => page.locator(`.test-explorer .monaco-list-row[aria-level="${level}"]`, { hasText: label }).first();
	const fuzzEvalRow = () => testRow(2, 'FuzzEval');
	const status = () => page.locator('.statusbar-item', { hasText: /fuzzls/ }).first().innerText().catch(() => '?');
	await step('the Test Explorer lists FuzzEval under its package', async () => {
		await palette('>Testing: Focus on Test Explorer View');
		const pkg = testRow(1, 'calc');
		await pkg.waitFor({ timeout: 15000 });
		if ((await pkg.getAttribute('aria-expanded')) !== 'true') {
			await pkg.locator('.monaco-tl-twistie').click();
		}
		await fuzzEvalRow().waitFor({ timeout: 10000 });
		const rows = await page.locator('.test-explorer .monaco-list-row').evaluateAll((es) => es.map((e) => `${'  '.repeat(Number(e.getAttribute('aria-level')) - 1)}${e.textContent}`));
		console.log(`     tests: ${rows.join(' / ')}`);
	});

	await step('the "Fuzz" profile (Run Test on FuzzEval) starts fuzzing', async () => {
		// Stop what the code lens started, so that the run has to start it.
		await palette('>fuzzls: Stop fuzzing every target');
		await page.waitForFunction(() => ![...document.querySelectorAll('.statusbar-item')].some((e) => /fuzzls: .*running/.test(e.textContent ?? '')), undefined, { timeout: 20000 });
		const stopped = Date.now();
		const row = fuzzEvalRow();
		await row.hover();
		await row.locator('a.action-label[aria-label="Run Test"]').click();
		await page.locator('.statusbar-item', { hasText: /fuzzls: 1 running/ }).first().waitFor({ timeout: 30000 });
		const started = Date.now();
		// The run's output (Test Results) is the daemon's status of FuzzEval.
		await page.locator('.xterm-rows', { hasText: /FuzzEval: fuzzing/ }).first().waitFor();
		await page.locator('.test-explorer .monaco-list-row[aria-level="2"] .codicon-loading').first().waitFor({ timeout: 5000 });
		console.log(`     status bar: ${await status()} (running ${((started - stopped) / 1000).toFixed(1)} s after the stop, fuzzing ${((Date.now() - started) / 1000).toFixed(1)} s later)`);
	});

	await step('the "Corpus coverage" profile fills the Test Coverage view', async () => {
		const row = fuzzEvalRow();
		await row.hover();
		await row.locator('a.action-label[aria-label="Run Test with Coverage"]').click();
		await page.locator('.pane-header', { hasText: 'Test Coverage' }).first().waitFor({ timeout: 15000 });
		const file = page.locator('.pane .monaco-list-row', { hasText: /calc\.go\s*\d+(\.\d+)?%/ }).first();
		await file.waitFor({ timeout: 15000 });
		const rows = await page.locator('.pane .monaco-list-row', { hasText: /\d%/ }).allInnerTexts();
		console.log(`     coverage: ${rows.map((r) => r.replace(/\s+/g, ' ').trim()).join(' / ')}`);
	});
	await shot('e2e-testing.png');

	await step('SIGKILL of the daemon: it restarts and says so, the Fuzz run ends', async () => {
		const daemons = () => descendants(server.pid).filter((p) => path.basename(p.cmd[0] ?? '') === 'fuzzls' && p.cmd[1] === 'serve');
		const before = daemons();
		if (before.length !== 1) {
			throw new Error(`want one "fuzzls serve" under code-server (pid ${server.pid}), found ${before.length}`);
		}
		process.kill(before[0].pid, 'SIGKILL');
		console.log(`     killed fuzzls serve (pid ${before[0].pid})`);
		const toast = page.locator('.notification-toast', { hasText: /daemon .*restarted/ }).first();
		await toast.waitFor({ timeout: 30000 });
		console.log(`     notification: ${(await toast.locator('.notification-list-item-message').first().innerText()).replace(/\s+/g, ' ')}`);
		const after = daemons();
		if (after.length !== 1 || after[0].pid === before[0].pid) {
			throw new Error(`want a new "fuzzls serve", found ${JSON.stringify(after.map((p) => p.pid))}`);
		}
		// The status bar is back to idle, the run of the dead daemon's session ended.
		await page.waitForFunction(() => [...document.querySelectorAll('.statusbar-item')].some((e) => /^\s*fuzzls\s*$/.test(e.textContent ?? '')), undefined, { timeout: 10000 });
		await page.locator('.test-explorer .monaco-list-row[aria-level="2"] .codicon-loading').first().waitFor({ state: 'detached', timeout: 10000 });
		await fuzzEvalRow().locator('.codicon-testing-error-icon').waitFor({ timeout: 5000 });
	});
	await page.waitForTimeout(500); // the toast slides in
	await shot('e2e-restart.png');

	await step('"Fuzz again" in the notification fuzzes FuzzEval with the new daemon', async () => {
		let toast = page.locator('.notification-toast', { hasText: /daemon .*restarted/ }).first();
		if (!(await toast.isVisible())) {
			// Toasts hide after a while; the notification stays in the center.
			await palette('>Notifications: Show Notifications');
			toast = page.locator('.notifications-center .notification-list-item', { hasText: /daemon .*restarted/ }).first();
		}
		await toast.locator('.monaco-button', { hasText: 'Fuzz again' }).first().click();
		await page.locator('.statusbar-item', { hasText: /fuzzls: 1 running/ }).first().waitFor({ timeout: 30000 });
		// The Fuzzing view (not the code lens: while fuzzing the daemon asks for new
		// lenses every second, and under load VS Code's debounce can outwait that).
		await palette('>fuzzls: Show the Fuzzing view');
		const view = page.locator('.pane', { has: page.locator('.pane-header', { hasText: /^\s*Fuzzing\s*$/ }) }).first();
		const row = view.locator('.monaco-list-row', { hasText: /FuzzEval\s*fuzzing/ }).first();
		await row.waitFor({ timeout: 30000 });
		console.log(`     status bar: ${await status()}; Fuzzing view: ${(await row.innerText()).replace(/\s+/g, ' ')}`);
	});
	await blockerSteps();
	await structSteps();

	// blockerSteps: blockers, "Generate fuzz test" and the plateau, on blockers/
	// (testdata/blockers: a sha256 of the input compared with a constant).
	async function blockerSteps() {
		const magic = path.join(ws, 'blockers', 'magic.go');
		const lineOf = (file, mark) => fs.readFileSync(file, 'utf8').split('\n').findIndex((l) => l.includes(mark)) + 1;
		const gate = lineOf(magic, 'MARK:gate');
		const behind = lineOf(magic, 'MARK:behind');
		const evalLine = lineOf(path.join(ws, 'calc.go'), 'func Eval(');
		const cursorLine = () => page.evaluate(() => /Ln (\d+)/.exec(document.querySelector('[id="status.editor.selection"]')?.textContent ?? '')?.[1]);

		const startFuzzCheck = () => startTarget('magic_test.go', 'FuzzCheck');

		await step('FuzzCheck in blockers/magic_test.go fuzzes (its "▶ Fuzz" lens)', startFuzzCheck);

		await step(`the hover on the uncovered block (magic.go:${behind}) names the comparison, the constant and a nearest value`, async () => {
			await openFile('magic.go');
			const hover = page.locator('.monaco-hover', { hasText: 'Not covered' }).first();
			const deadline = Date.now() + waitMs;
			for (;;) {
				await palette(`:${behind}`);
				await palette('>Show or Focus Hover');
				if (await hover.waitFor({ timeout: 5000 }).then(() => true, () => false)) {
					break;
				}
				if (Date.now() > deadline) {
					throw new Error('no "Not covered" hover');
				}
				await page.keyboard.press('Escape');
				await page.waitForTimeout(2000); // the first build and comparison rounds
			}
			const text = (await hover.innerText()).replace(/\s+/g, ' ');
			console.log(`     hover: ${text.slice(0, 300)}`);
			if (!text.includes('binary.BigEndian.Uint32(h[:4]) == 0x89504e47') || !/nearest: 0x[0-9a-f]+/.test(text) || !text.includes('wanted: 0x89504e47')) {
				throw new Error(`the hover does not name the comparison, a nearest value and the constant: ${text}`);
			}
			await shot('e2e-blocker-hover.png');
			await page.keyboard.press('Escape');
		});

		await step('"Generate fuzz test" (source action on calc.go\'s Eval) writes a Fuzz function into calc_test.go', async () => {
			await openFile('calc.go');
			const item = page.locator('.action-widget .monaco-list-row', { hasText: /Generate fuzz test Fuzz\w+/ }).first();
			// The daemon waits a second for the package's typed load, which goes on
			// after: under load the first menus can come without the action.
			for (let i = 0; ; i++) {
				await palette(`:${evalLine}`);
				await palette('>Source Action...');
				if (await item.waitFor({ timeout: 8000 }).then(() => true, () => false)) {
					break;
				}
				if (i === 4) {
					throw new Error('no "Generate fuzz test" source action on func Eval');
				}
				console.log('     (no "Generate fuzz test" yet; again)');
				await page.keyboard.press('Escape');
				await page.waitForTimeout(2000);
			}
			const name = /Generate fuzz test (Fuzz\w+)/.exec(await item.innerText())[1];
			await item.click();
			const testFile = path.join(ws, 'calc_test.go');
			const deadline = Date.now() + 20000;
			while (!fs.readFileSync(testFile, 'utf8').includes(`func ${name}(f *testing.F)`)) {
				if (Date.now() > deadline) {
					throw new Error(`no func ${name} in calc_test.go`);
				}
				await palette('>File: Save All');
				await page.waitForTimeout(1000);
			}
			const src = fs.readFileSync(testFile, 'utf8');
			const fn = src.slice(src.indexOf(`func ${name}(`));
			console.log(`     calc_test.go: ${fn.split('\n').slice(0, 8).join(' | ')}`);
		});

		await step('the Fuzzing view lists FuzzCheck\'s blocker; clicking it opens the comparison', async () => {
			await palette('>fuzzls: Show the Fuzzing view');
			const view = fuzzingView();
			// The view's rows must fit (a tree only has the rows it shows): the
			// folder's pane collapsed, and only blockers' package open.
			const folder = page.locator('.pane-header[aria-expanded="true"]', { hasText: /^\s*calc\s*$/i }).first();
			if (await folder.isVisible().catch(() => false)) {
				await folder.click();
			}
			const calc = view.locator('.monaco-list-row[aria-expanded="true"]', { hasText: 'example.com/calc' }).first();
			if (await calc.isVisible().catch(() => false)) {
				await calc.locator('.monaco-tl-twistie').click();
			}
			const row = view.locator('.monaco-list-row', { hasText: 'binary.BigEndian.Uint32(h[:4]) == 0x89504e47' }).first();
			await row.waitFor({ timeout: 30000 });
			const text = (await row.innerText()).replace(/\s+/g, ' ');
			console.log(`     blocker row: ${text}`);
			if (!/nearest 0x[0-9a-f]+/.test(text) || !/\d+ blocks? behind/.test(text)) {
				throw new Error(`the blocker's row lacks the nearest value or the blocks behind: ${text}`);
			}
			await row.click();
			await page.locator('.tab.active', { hasText: 'magic.go' }).first().waitFor({ timeout: 10000 });
			await page.waitForFunction((want) => /Ln (\d+)/.exec(document.querySelector('[id="status.editor.selection"]')?.textContent ?? '')?.[1] === String(want), gate, { timeout: 10000 })
				.catch(async () => {
					throw new Error(`cursor on line ${await cursorLine()}, want the comparison's ${gate}`);
				});
		});

		await step('the Fuzzing view says FuzzCheck has had no new coverage for a minute', async () => {
			const row = fuzzingView().locator('.monaco-list-row', { hasText: /plateau\s*no new coverage for \d+ min, [\d.]+[kM]? execs/ }).first();
			await row.waitFor({ timeout: Math.max(waitMs, 120000) });
			console.log(`     ${(await row.innerText()).replace(/\s+/g, ' ')}`);
			await shot('e2e-blockers-view.png');
		});

		await step('with fuzzls.plateau set, FuzzCheck stops on its plateau', async () => {
			// The workspace's settings (the folder is watched), applied by the
			// engine from the next start once no session runs.
			fs.mkdirSync(path.join(ws, '.vscode'), { recursive: true });
			fs.writeFileSync(path.join(ws, '.vscode', 'settings.json'), JSON.stringify({ 'fuzzls.plateau': '20s' }, null, 2));
			await page.waitForTimeout(5000);
			await palette('>fuzzls: Stop fuzzing every target');
			await page.waitForFunction(() => ![...document.querySelectorAll('.statusbar-item')].some((e) => /fuzzls: .*running/.test(e.textContent ?? '')), undefined, { timeout: 20000 });
			const started = Date.now();
			await startFuzzCheck();
			const view = fuzzingView();
			await view.locator('.monaco-list-row', { hasText: /FuzzCheck\s*stopped/ }).first().waitFor({ timeout: 90000 });
			console.log(`     stopped ${((Date.now() - started) / 1000).toFixed(1)} s after the start`);
			const why = view.locator('.monaco-list-row', { hasText: /stopped after \S+ without new coverage/ }).first();
			await why.waitFor({ timeout: 10000 });
			console.log(`     ${(await why.innerText()).replace(/\s+/g, ' ')}`);
			await shot('e2e-plateau.png');
		});
	}
	// structSteps: a target go test cannot run, on structs/ (testdata/structs:
	// FuzzServe takes a struct and an encoding.TextUnmarshaler, fuzzed field by
	// field; its bug needs three of those values right).
	async function structSteps() {
		const cfg = path.join(ws, 'structs', 'config.go');
		const bug = fs.readFileSync(cfg, 'utf8').split('\n').findIndex((l) => l.includes('MARK:bug')) + 1;
		const says = 'go test cannot run FuzzServe: argument structs.Config is a struct, argument structs.Level is an encoding.TextUnmarshaler; fuzzls fuzzes them field by field';

		// It can crash at once, and stop; its row can be out of the Fuzzing view (a
		// tree has only the rows it shows): its "■ Stop" lens says it started too.
		await step('FuzzServe in structs/config_test.go fuzzes (its "▶ Fuzz" lens)', () =>
			startTarget('config_test.go', 'FuzzServe', 'building|fuzzing|stopped', page.locator('.codelens-decoration a', { hasText: '■ Stop' })));

		await step('the lens above FuzzServe says go test cannot run it', async () => {
			// A label without a command (a span, not a link), there once the seeds ran.
			const lens = page.locator('.codelens-decoration', { hasText: `⚠ ${says}` }).first();
			await lens.waitFor({ timeout: waitMs });
			console.log(`     lens: ${(await lens.innerText()).replace(/\s+/g, ' ')}`);
			await shot('e2e-struct-lens.png');
		});

		await step(`the crash in the Problems panel; clicking it puts the cursor on config.go:${bug}`, async () => {
			await palette('>View: Focus on Problems View');
			// In the full run calc's and blockers' problems come first, and the
			// list draws only the rows in sight: filter to this crash.
			const filter = page.locator('.panel .viewpane-filter input, .panel .markers-panel-action-filter input').first();
			await filter.fill('8443');
			const row = page.locator('.markers-panel .monaco-list-row', { hasText: /on 8443 at crit/ }).first();
			await row.waitFor({ timeout: waitMs });
			const text = (await row.innerText()).replace(/\s+/g, ' ');
			console.log(`     problem: ${text}`);
			if (!text.includes(`[Ln ${bug},`) || !text.includes('FuzzServe(')) {
				throw new Error(`the crash is not at config.go:${bug} or does not name FuzzServe: ${text}`);
			}
			await row.click();
			await page.keyboard.press('Enter');
			await page.locator('.tab.active', { hasText: 'config.go' }).first().waitFor({ timeout: 10000 });
			await page.waitForFunction((want) => /Ln (\d+)/.exec(document.querySelector('[id="status.editor.selection"]')?.textContent ?? '')?.[1] === String(want), bug, { timeout: 10000 })
				.catch(async () => {
					throw new Error(`cursor at "${await page.locator('[id="status.editor.selection"]').innerText().catch(() => '?')}", want Ln ${bug}`);
				});
			await shot('e2e-struct-crash.png');
		});
	}
}

/** descendants lists the processes under pid (from /proc): {pid, cmd}. */
function descendants(pid) {
	const kids = new Map();
	for (const p of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(p)) {
			continue;
		}
		try {
			const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
			const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
			const cmd = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').filter(Boolean);
			kids.set(ppid, [...(kids.get(ppid) ?? []), { pid: Number(p), cmd }]);
		} catch {
			// gone meanwhile
		}
	}
	const out = [];
	const walk = (q) => {
		for (const c of kids.get(q) ?? []) {
			out.push(c);
			walk(c.pid);
		}
	};
	walk(pid);
	return out;
}

let code = 0;
try {
	await main();
} catch (err) {
	code = 1;
	if (passed + failed === 0 || !String(err?.message).length) {
		console.log(`FAIL setup: ${err?.stack ?? err}`);
		failed++;
	}
} finally {
	await lastShot().catch(() => undefined);
	for (const c of cleanups.reverse()) {
		try {
			await c();
		} catch {
			// best effort
		}
	}
}
console.log(`screenshots: ${buildDir}`);
console.log(`e2e: ${passed} passed, ${failed} failed`);
process.exit(code || (failed ? 1 : 0));
