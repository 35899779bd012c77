// Shared by report.html and dashboard.html (the CLI inlines it where /*COMMON_JS*/ stands).
// Pages are built with these DOM calls and textContent only: no text from the data is ever
// parsed as HTML.
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else if (k === "onclick") node.onclick = v; else node.setAttribute(k, v);
  }
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}
// A table; cells may be nodes, numbers (right-aligned) or text (null and undefined: empty).
function table(headers, rows) {
  const t = el("table");
  t.append(el("tr", {}, ...headers.map(h => el("th", {}, h))));
  for (const row of rows) t.append(el("tr", {}, ...row.map(v => v instanceof Node ? el("td", {}, v)
    : typeof v === "number" ? el("td", {class: "num"}, v) : el("td", {}, v ?? ""))));
  return t;
}
