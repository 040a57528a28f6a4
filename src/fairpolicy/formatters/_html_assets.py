"""The HTML report's inline assets: the status icon symbols and the stylesheet."""

ICONS = """<svg width="0" height="0" style="position:absolute" aria-hidden="true"><defs>
<symbol id="icon-pass" viewBox="0 0 16 16"><circle cx="8" cy="8" r="8" fill="#2e7d32"/>\
<path d="M4 8.5l2.5 2.5L12 5.5" stroke="#fff" stroke-width="2" fill="none"/></symbol>
<symbol id="icon-fail" viewBox="0 0 16 16"><circle cx="8" cy="8" r="8" fill="#c62828"/>\
<path d="M5 5l6 6M11 5l-6 6" stroke="#fff" stroke-width="2"/></symbol>
<symbol id="icon-warn" viewBox="0 0 16 16"><path d="M8 1L15.5 15H.5z" fill="#b26a00"/>\
<path d="M8 6v4.5M8 12v1.6" stroke="#fff" stroke-width="2"/></symbol>
<symbol id="icon-inconclusive" viewBox="0 0 16 16"><circle cx="8" cy="8" r="8" fill="#6a1b9a"/>\
<path d="M5.6 6.2a2.4 2.4 0 1 1 3.2 2.3c-.6.3-.8.7-.8 1.4v.6M8 11.8v1.6" stroke="#fff" \
stroke-width="1.8" fill="none"/></symbol>
<symbol id="icon-error" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#7f0000"/>\
<path d="M8 3.5v6M8 11.5v1.8" stroke="#fff" stroke-width="2"/></symbol>
</defs></svg>"""

CSS = """
:root{--ink:#1f2328;--muted:#59636e;--line:#d0d7de;--bg:#f6f8fa}
*{box-sizing:border-box}
body{font-family:"DejaVu Sans","Liberation Sans",Arial,sans-serif;color:var(--ink);
margin:0 auto;max-width:1180px;padding:24px;line-height:1.45;font-size:14px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;border-bottom:1px solid var(--line);
padding-bottom:4px;margin-top:32px}h3{font-size:16px;margin:0 0 8px}
code,pre{font-family:"DejaVu Sans Mono","Liberation Mono",monospace;font-size:12.5px}
pre{background:var(--bg);padding:8px 10px;overflow-x:auto;white-space:pre-wrap;margin:4px 0}
table{border-collapse:collapse;margin:8px 0}
th,td{border:1px solid var(--line);padding:3px 8px;text-align:left;vertical-align:top}
th{background:var(--bg)}td.num{text-align:right;font-variant-numeric:tabular-nums;
white-space:nowrap}
.verdict{border:2px solid;border-radius:6px;padding:14px 18px;margin:12px 0 18px}
.verdict .big{font-size:22px;font-weight:bold;display:flex;align-items:center;gap:10px}
.verdict .icon{width:26px;height:26px}
.gate-pass{border-color:#2e7d32;background:#edf7ee}.gate-fail{border-color:#c62828;
background:#fdecea}.gate-error{border-color:#7f0000;background:#fbe9e7}
.badge{display:inline-flex;align-items:center;gap:5px;font-weight:bold;padding:1px 8px 1px 4px;
border-radius:12px;border:1px solid;white-space:nowrap;font-size:13px;vertical-align:middle}
.badge .icon{width:16px;height:16px}
.s-pass{color:#1b5e20;border-color:#2e7d32;background:#edf7ee}
.s-fail{color:#b71c1c;border-color:#c62828;background:#fdecea}
.s-warn{color:#7a4a00;border-color:#b26a00;background:#fff4e0}
.s-inconclusive{color:#4a148c;border-color:#6a1b9a;background:#f3e5f5}
.s-error{color:#7f0000;border-color:#7f0000;background:#fbe9e7}
.control{border:1px solid var(--line);border-left-width:6px;border-radius:6px;
padding:14px 18px;margin:18px 0;break-inside:avoid-page}
.control.st-pass{border-left-color:#2e7d32}.control.st-fail{border-left-color:#c62828}
.control.st-warn{border-left-color:#b26a00}.control.st-inconclusive{border-left-color:#6a1b9a}
.control.st-error{border-left-color:#7f0000}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:3px 14px;margin:8px 0}
dl.facts dt{font-weight:bold;color:var(--muted)}dl.facts dd{margin:0}
figure{margin:12px 0;overflow-x:auto}figcaption{color:var(--muted);font-size:13px;
max-width:900px}
svg.chart{display:block;max-width:100%;height:auto}
.meta td:first-child{font-weight:bold;color:var(--muted);white-space:nowrap}
.hash{font-family:"DejaVu Sans Mono",monospace;font-size:12px;word-break:break-all}
.counts{display:flex;flex-wrap:wrap;gap:14px;margin-bottom:22px}.counts table{margin:0}
caption{text-align:left}
.counts caption{font-weight:bold;text-align:left;padding:2px 0}
.muted{color:var(--muted)}.outside{color:#b71c1c;font-weight:bold}
details>summary{cursor:pointer;color:var(--muted)}
@media print{body{max-width:none;padding:0}details{display:block}a{color:inherit}}
"""
