// The layers of src/ (docs/architecture.md#the-layers), read from the import lines of every module:
// no import cycle, type-only imports included; the core (src/http, auth, db, lib, drivers, cron and
// the Worker entry) never imports a feature; the file side (src/features/fs) imports no other
// feature, which src/app.ts composes on top of it; no feature folder and the one below it import
// each other; and no file of src/ grows past 600 lines. Tests are left out of the graph: nothing
// imports them, and a core module's test may set a scene with a feature's helpers.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const MAX_LINES = 600;

function walk(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (statSync(join(ROOT, path)).isDirectory()) return walk(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

const FILES = walk("src");
const MODULES = FILES.filter((path) => !/\.test\.tsx?$/.test(path));

/** Each module's imports of other modules of src/ (relative specifiers, resolved), `import type` included. */
function importGraph(modules: string[], read: (path: string) => string): Map<string, string[]> {
  const known = new Set(modules);
  return new Map(
    modules.map((from) => {
      const { importedFiles } = ts.preProcessFile(read(from), true, true);
      const targets = importedFiles
        .map(({ fileName }) => fileName)
        .filter((name) => name.startsWith("."))
        .map((name) => relative(ROOT, resolve(ROOT, dirname(from), name)))
        .filter((to) => known.has(to));
      return [from, [...new Set(targets)]];
    }),
  );
}

/** Every cycle's modules (strongly connected components of more than one module, or a self-import). */
function cycles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let popped: string;
    do {
      popped = stack.pop()!;
      onStack.delete(popped);
      component.push(popped);
    } while (popped !== node);
    if (component.length > 1 || graph.get(node)?.includes(node)) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

const CORE = /^src\/(http|auth|db|lib|drivers|cron)\/|^src\/index\.ts$/;
const featureOf = (path: string) => /^src\/features\/([^/]+)\//.exec(path)?.[1] ?? null;

/** The import edges that point up: the core into a feature, the file side into another feature. */
function upwardEdges(graph: Map<string, string[]>): string[] {
  const edges: string[] = [];
  for (const [from, targets] of graph)
    for (const to of targets) {
      const feature = featureOf(to);
      if (feature === null) continue;
      if (CORE.test(from)) edges.push(`${from} -> ${to} (the core imports a feature)`);
      else if (featureOf(from) === "fs" && feature !== "fs") edges.push(`${from} -> ${to} (fs imports a feature)`);
    }
  return edges;
}

/** Pairs of feature folders that import each other (one of them should sit below the other). */
function featureCycles(graph: Map<string, string[]>): string[] {
  const uses = new Map<string, Set<string>>();
  for (const [from, targets] of graph)
    for (const to of targets) {
      const [a, b] = [featureOf(from), featureOf(to)];
      if (a === null || b === null || a === b) continue;
      uses.set(a, (uses.get(a) ?? new Set()).add(b));
    }
  const pairs: string[] = [];
  for (const [a, targets] of uses)
    for (const b of targets) if (a < b && uses.get(b)?.has(a)) pairs.push(`${a} <-> ${b}`);
  return pairs;
}

const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const graph = importGraph(MODULES, read);

describe("the layers of src/", () => {
  it("reads the imports it checks (the graph is not empty, type-only imports count)", () => {
    expect(graph.get("src/app.ts")).toContain("src/http/router.ts");
    expect(graph.get("src/http/router.ts")).toContain("src/http/context.ts");
  });

  it("has no import cycle, type-only imports included", () => {
    expect(cycles(graph)).toEqual([]);
  });

  it("has no feature folders importing each other", () => {
    expect(featureCycles(graph)).toEqual([]);
  });

  it("never imports upward: the core imports no feature, the file side no other feature", () => {
    expect(upwardEdges(graph)).toEqual([]);
  });

  it("keeps every file of src/ at most 600 lines", () => {
    const over = FILES.flatMap((path) => {
      const lines = read(path).split("\n").length - 1;
      return lines > MAX_LINES ? [`${path}: ${lines} lines`] : [];
    });
    expect(over).toEqual([]);
  });

  it("catches each kind of violation", () => {
    const files: Record<string, string> = {
      "src/http/a.ts": 'import type { X } from "../features/fs/b.ts";',
      "src/features/fs/b.ts": 'import { y } from "../shares/c.ts";',
      "src/features/shares/c.ts": 'export { z } from "./d.ts";',
      "src/features/shares/d.ts": 'import "./c.ts"; import { w } from "../fs/b.ts";',
    };
    const sample = importGraph(Object.keys(files), (path) => files[path]!);
    expect(upwardEdges(sample)).toEqual([
      "src/http/a.ts -> src/features/fs/b.ts (the core imports a feature)",
      "src/features/fs/b.ts -> src/features/shares/c.ts (fs imports a feature)",
    ]);
    expect(cycles(sample)).toEqual([["src/features/fs/b.ts", "src/features/shares/c.ts", "src/features/shares/d.ts"]]);
    expect(featureCycles(sample)).toEqual(["fs <-> shares"]);
  });
});
