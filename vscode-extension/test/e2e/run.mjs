// End-to-end test of the extension in a real VS Code (code-server, driven in
// headless Chromium by playwright-core). It installs the packaged .vsix, opens a
// copy of testdata/calc, clicks "▶ Fuzz" above FuzzEval, waits for coverage
// highlights in calc.go and for the crash in the Problems panel, clicks the crash
// and checks that the cursor is on the panic line (the line marked `// BUG`),
// applies "Add input to seed corpus" from the lightbulb and checks the new file
// under testdata/fuzz/FuzzEval/, and saves a screenshot under build/.
//
//   node test/e2e/run.mjs [path/to/fuzzls-linux-x64.vsix]
//
// Environment: FUZZLS_E2E_CACHE (see scripts/e2e-setup.sh), FUZZLS_E2E_KEEP=1 keeps
// the run's folder, FUZZLS_E2E_TIMEOUT_S (default 120) bounds each wait for the
// daemon. The last line is "e2e: N passed, M failed".
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { copyWorkspace, extDir, freePort, installExtension, layout, repoRoot, startCodeServer, tools } from './codeServer.mjs';

const vsix = path.resolve(process.argv[2] || path.join(extDir, 'fuzzls-linux-x64.vsix'));
const waitMs = Number(process.env.FUZZLS_E2E_TIMEOUT_S || 120) * 1000;
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
			await page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first().waitFor({ timeout: 15000 });
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

	await step('workbench loads', () => page.goto(server.url).then(() => page.locator('.monaco-workbench').waitFor({ timeout: 60000 })));
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

	await step('"Add input to seed corpus" writes testdata/fuzz/FuzzEval/<file>', async () => {
		// Put the cursor on the crash line (Go to Line focuses the editor), then open
		// the quick fixes (Ctrl+.).
		await palette(`:${bugLine}`);
		await page.keyboard.press('Control+.');
		const item = page.locator('.action-widget .monaco-list-row', { hasText: 'Add input to seed corpus' }).first();
		await item.waitFor({ timeout: 15000 });
		await item.click();
		const corpus = path.join(ws, 'testdata', 'fuzz', 'FuzzEval');
		const deadline = Date.now() + 20000;
		let files = [];
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
		if (files.length === 0) {
			throw new Error(`nothing under ${corpus}`);
		}
		const content = fs.readFileSync(path.join(corpus, files[0]), 'utf8');
		if (!content.startsWith('go test fuzz v1')) {
			throw new Error(`${files[0]} does not hold a go test fuzz v1 input: ${JSON.stringify(content.slice(0, 80))}`);
		}
		console.log(`     testdata/fuzz/FuzzEval/${files[0]}: ${JSON.stringify(content)}`);
	});

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
		await page.locator('.pane .monaco-list-row', { hasText: 'FuzzEval' }).first().waitFor({ timeout: 15000 });
		await page.locator('.pane .monaco-list-row', { hasText: 'example.com/calc' }).first().waitFor({ timeout: 5000 });
	});

	await step('the chart opens for FuzzEval', async () => {
		await palette('>fuzzls: Show coverage and execs/s chart');
		await page.locator('.tab', { hasText: 'Fuzzing: FuzzEval' }).first().waitFor({ timeout: 15000 });
		// The webview is an iframe in an iframe: look for the chart in every frame.
		const deadline = Date.now() + 15000;
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
