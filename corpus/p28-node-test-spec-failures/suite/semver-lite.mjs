// A small version-range helper: parse, compare and match "x.y.z" versions.
export function parse(v) {
  const m = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?$/.exec(v.trim());
  if (!m) throw new TypeError(`Invalid version: ${v}`);
  return { major: +m[1], minor: +m[2], patch: +m[3], pre: m[4] ? m[4].split('.') : [] };
}
export function compare(a, b) {
  const x = parse(a), y = parse(b);
  for (const k of ['major', 'minor', 'patch']) if (x[k] !== y[k]) return x[k] < y[k] ? -1 : 1;
  // bug: prerelease ordering compares strings, so "rc.10" < "rc.9"
  const px = x.pre.join('.'), py = y.pre.join('.');
  if (px === py) return 0;
  if (!px) return 1;
  if (!py) return -1;
  return px < py ? -1 : 1;
}
export function satisfies(v, range) {
  const r = range.trim();
  if (r.startsWith('^')) {
    const base = parse(r.slice(1)), got = parse(v);
    return got.major === base.major && compare(v, r.slice(1)) >= 0;
  }
  if (r.startsWith('~')) {
    const base = parse(r.slice(1)), got = parse(v);
    // bug: tilde should pin the minor too
    return got.major === base.major && compare(v, r.slice(1)) >= 0;
  }
  if (r.startsWith('>=')) return compare(v, r.slice(2)) >= 0;
  if (r.startsWith('<')) return compare(v, r.slice(1)) < 0;
  return compare(v, r) === 0;
}
export function maxSatisfying(list, range) {
  return list.filter((v) => satisfies(v, range)).sort(compare).pop() ?? null;
}
export function bump(v, part) {
  const p = parse(v);
  if (part === 'major') return `${p.major + 1}.0.0`;
  if (part === 'minor') return `${p.major}.${p.minor + 1}.0`;
  if (part === 'patch') return `${p.major}.${p.minor}.${p.patch + 1}`;
  throw new RangeError(`Unknown part: ${part}`);
}
