import { Resvg } from '@resvg/resvg-js';
import type { RampPoint } from './stats';

// The run's Markdown table and its chart (SVG drawn here, rendered to PNG by resvg).

export interface Figure {
  name: string;
  value: number;
  unit: string;
  /** e.g. "0.62 of the floor" */
  ratio?: string;
  goal?: string;
  pass?: boolean;
}

const fmt = (x: number) =>
  !Number.isFinite(x)
    ? 'n/a'
    : Math.abs(x) >= 100
      ? x.toFixed(0)
      : Math.abs(x) >= 10
        ? x.toFixed(1)
        : x.toFixed(2);

export function markdownTable(figures: readonly Figure[]): string {
  const rows = figures.map(
    (f) =>
      `| ${f.name} | ${fmt(f.value)} ${f.unit} | ${f.ratio ?? ''} | ${f.goal ?? ''} | ${f.pass === undefined ? '' : f.pass ? 'pass' : '**fail**'} |`,
  );
  return ['| figure | value | ratio | goal | |', '|---|---|---|---|---|', ...rows].join('\n');
}

export interface Series {
  name: string;
  color: string;
  points: readonly RampPoint[];
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/** Throughput against offered load, one line per series, with the y = x line for reference. */
export function chartSvg(title: string, series: readonly Series[]): string {
  const W = 800;
  const H = 480;
  const m = { l: 70, r: 210, t: 50, b: 60 };
  const all = series.flatMap((s) => s.points);
  const maxX = niceMax(Math.max(1, ...all.map((p) => p.offered)));
  const maxY = niceMax(Math.max(1, ...all.map((p) => p.achieved)));
  const x = (v: number) => m.l + (v / maxX) * (W - m.l - m.r);
  const y = (v: number) => H - m.b - (v / maxY) * (H - m.t - m.b);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="DejaVu Sans, sans-serif">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2 - m.r / 2}" y="28" font-size="17" text-anchor="middle">${esc(title)}</text>`,
  ];
  for (let i = 0; i <= 5; i++) {
    const vx = (maxX * i) / 5;
    const vy = (maxY * i) / 5;
    parts.push(
      `<line x1="${m.l}" x2="${W - m.r}" y1="${y(vy)}" y2="${y(vy)}" stroke="#e5e5e5"/>`,
      `<text x="${m.l - 8}" y="${y(vy) + 4}" font-size="12" text-anchor="end">${fmt(vy)}</text>`,
      `<line x1="${x(vx)}" x2="${x(vx)}" y1="${m.t}" y2="${H - m.b}" stroke="#f0f0f0"/>`,
      `<text x="${x(vx)}" y="${H - m.b + 18}" font-size="12" text-anchor="middle">${fmt(vx)}</text>`,
    );
  }
  parts.push(
    `<line x1="${m.l}" y1="${H - m.b}" x2="${W - m.r}" y2="${H - m.b}" stroke="#333"/>`,
    `<line x1="${m.l}" y1="${m.t}" x2="${m.l}" y2="${H - m.b}" stroke="#333"/>`,
    `<text x="${(m.l + W - m.r) / 2}" y="${H - 18}" font-size="13" text-anchor="middle">offered load (flows started per second)</text>`,
    `<text x="18" y="${(m.t + H - m.b) / 2}" font-size="13" text-anchor="middle" transform="rotate(-90 18 ${(m.t + H - m.b) / 2})">completed per second</text>`,
  );
  const diag = Math.min(maxX, maxY);
  parts.push(
    `<line x1="${x(0)}" y1="${y(0)}" x2="${x(diag)}" y2="${y(diag)}" stroke="#999" stroke-dasharray="5 5"/>`,
  );
  series.forEach((s, i) => {
    const pts = s.points.map((p) => `${x(p.offered).toFixed(1)},${y(p.achieved).toFixed(1)}`);
    if (pts.length) {
      parts.push(`<polyline points="${pts.join(' ')}" fill="none" stroke="${s.color}" stroke-width="2.5"/>`);
      for (const p of s.points)
        parts.push(`<circle cx="${x(p.offered)}" cy="${y(p.achieved)}" r="4" fill="${s.color}"/>`);
    }
    const ly = m.t + 20 + i * 24;
    parts.push(
      `<line x1="${W - m.r + 20}" x2="${W - m.r + 45}" y1="${ly}" y2="${ly}" stroke="${s.color}" stroke-width="3"/>`,
      `<text x="${W - m.r + 52}" y="${ly + 4}" font-size="13">${esc(s.name)}</text>`,
    );
  });
  const ly = m.t + 20 + series.length * 24;
  parts.push(
    `<line x1="${W - m.r + 20}" x2="${W - m.r + 45}" y1="${ly}" y2="${ly}" stroke="#999" stroke-dasharray="5 5"/>`,
    `<text x="${W - m.r + 52}" y="${ly + 4}" font-size="13">completed = offered</text>`,
    '</svg>',
  );
  return parts.join('\n');
}

function niceMax(v: number): number {
  const p = 10 ** Math.floor(Math.log10(v));
  for (const k of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (k * p >= v) return k * p;
  return 10 * p;
}

export function svgToPng(svg: string): Buffer {
  return Buffer.from(new Resvg(svg, { font: { loadSystemFonts: true } }).render().asPng());
}
