// Drawing a target's coverage and execs/s over time as an inline SVG (the chart
// webview shows it; no script library, nothing fetched). No VS Code dependency.

import type { Sample } from './history';
import { formatRate } from './statusModel';

export interface ChartOptions {
	width: number;
	height: number;
}

function esc(s: string): string {
	return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function polyline(points: Array<[number, number]>, cls: string): string {
	const d = points.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(' ');
	return `<polyline class="${cls}" fill="none" points="${d}"/>`;
}

/**
 * renderChart draws two lines over a shared time axis: covered blocks (left axis,
 * up to the number of blocks) and execs/s (right axis). Fewer than two samples give
 * a placeholder text.
 */
export function renderChart(samples: readonly Sample[], title: string, opt: ChartOptions = { width: 640, height: 280 }): string {
	const { width: W, height: H } = opt;
	const m = { l: 48, r: 56, t: 28, b: 28 };
	const pw = W - m.l - m.r;
	const ph = H - m.t - m.b;
	const head = `<svg xmlns="http://www.w3.org/2000/svg" class="fuzzls-chart" width="100%" preserveAspectRatio="xMinYMin meet" viewBox="0 0 ${W} ${H}">`
		+ `<text class="title" x="${m.l}" y="18">${esc(title)}</text>`;
	if (samples.length < 2) {
		return `${head}<text class="empty" x="${W / 2}" y="${H / 2}" text-anchor="middle">waiting for data…</text></svg>`;
	}
	const t0 = samples[0].t;
	const t1 = Math.max(samples[samples.length - 1].t, t0 + 1);
	const maxBlocks = Math.max(1, ...samples.map((s) => Math.max(s.blocks, s.covered)));
	const maxRate = Math.max(1, ...samples.map((s) => s.execsPerSec));
	const x = (t: number) => m.l + ((t - t0) / (t1 - t0)) * pw;
	const yCov = (v: number) => m.t + ph - (v / maxBlocks) * ph;
	const yRate = (v: number) => m.t + ph - (v / maxRate) * ph;
	const secs = Math.round((t1 - t0) / 1000);
	const last = samples[samples.length - 1];
	return head
		+ `<rect class="frame" x="${m.l}" y="${m.t}" width="${pw}" height="${ph}" fill="none"/>`
		+ polyline(samples.map((s) => [x(s.t), yCov(s.covered)]), 'coverage')
		+ polyline(samples.map((s) => [x(s.t), yRate(s.execsPerSec)]), 'rate')
		+ `<text class="axis coverage" x="${m.l - 6}" y="${m.t + 4}" text-anchor="end">${maxBlocks}</text>`
		+ `<text class="axis coverage" x="${m.l - 6}" y="${m.t + ph}" text-anchor="end">0</text>`
		+ `<text class="axis rate" x="${W - m.r + 6}" y="${m.t + 4}">${formatRate(maxRate)}/s</text>`
		+ `<text class="axis rate" x="${W - m.r + 6}" y="${m.t + ph}">0</text>`
		+ `<text class="axis" x="${m.l}" y="${H - 8}">0 s</text>`
		+ `<text class="axis" x="${W - m.r}" y="${H - 8}" text-anchor="end">${secs} s</text>`
		+ `<text class="legend coverage" x="${m.l + 8}" y="${m.t + 16}">covered ${last.covered}/${last.blocks} blocks</text>`
		+ `<text class="legend rate" x="${m.l + 8}" y="${m.t + 32}">${formatRate(last.execsPerSec)} execs/s</text>`
		+ '</svg>';
}
