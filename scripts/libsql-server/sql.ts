// A small SQL scanner for the local libSQL endpoint (development tooling).
//
// The `libsql` package prepares only the first statement of a string and silently ignores the
// rest, does not expose parameter names, and aborts the whole process (a Rust panic) when named
// arguments are bound to a statement with a nameless `?`. sqld parses statements itself, so this
// scanner recovers what we need to behave like it: the number of statements, the parameter
// names by index (numbered the way SQLite numbers them), and the leading verb. It follows the
// token rules of SQLite's tokenizer for everything that can hide a `;` or a parameter marker:
// string literals, quoted identifiers, comments and trigger bodies.

export interface SqlInfo {
  /** Number of non-empty statements in the text. */
  statementCount: number;
  /**
   * Parameters of the first statement: `paramNames[i]` is the name of parameter `i + 1`, with
   * its prefix (`:a`, `@a`, `$a`, `?3`), or null for `?` and for indexes no marker uses. The
   * length equals sqlite3_bind_parameter_count().
   */
  paramNames: (string | null)[];
  /** First keyword of the first statement, upper-cased; for `WITH ...`, the main statement's verb. */
  verb: string | undefined;
}

type TokenKind = "word" | "param" | "literal" | "punct";

interface Token {
  kind: TokenKind;
  text: string;
}

// SQLite refuses `?NNN` above SQLITE_MAX_VARIABLE_NUMBER at prepare time; the bound keeps a bogus
// marker from making us allocate a huge parameter list before that happens.
const MAX_VARIABLE_NUMBER = 32766;

const MAIN_VERBS = new Set(["SELECT", "VALUES", "INSERT", "REPLACE", "UPDATE", "DELETE"]);

export function inspectSql(sql: string): SqlInfo {
  const statements = splitStatements(tokenize(sql));
  const first = statements[0] ?? [];
  return {
    statementCount: statements.length,
    paramNames: parameterNames(first),
    verb: leadingVerb(first),
  };
}

/** Is `c` a character SQLite allows inside an identifier (IdChar in tokenize.c)? */
function isIdChar(c: string): boolean {
  return /[A-Za-z0-9_$]/.test(c) || c.charCodeAt(0) >= 0x80;
}

function tokenize(sql: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const push = (kind: TokenKind, end: number) => {
    tokens.push({ kind, text: sql.slice(i, end) });
    i = end;
  };
  // Index just past the closing `quote`, where a doubled quote is an escaped one.
  const quotedEnd = (quote: string) => {
    let j = i + 1;
    for (;;) {
      const k = sql.indexOf(quote, j);
      if (k < 0) return sql.length;
      if (sql[k + 1] !== quote) return k + 1;
      j = k + 2;
    }
  };

  while (i < sql.length) {
    const c = sql[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === "-" && sql[i + 1] === "-") {
      const end = sql.indexOf("\n", i);
      i = end < 0 ? sql.length : end + 1;
    } else if (c === "/" && sql[i + 1] === "*") {
      const end = sql.indexOf("*/", i + 2);
      i = end < 0 ? sql.length : end + 2;
    } else if (c === "'" || c === '"' || c === "`") {
      push("literal", quotedEnd(c));
    } else if (c === "[") {
      const end = sql.indexOf("]", i);
      push("literal", end < 0 ? sql.length : end + 1);
    } else if (c === "?") {
      let j = i + 1;
      while (j < sql.length && /[0-9]/.test(sql[j]!)) j++;
      push("param", j);
    } else if (c === ":" || c === "@" || c === "$") {
      // Same rules as SQLite: identifier characters, `::` pairs, and a `(...)` suffix (Tcl style).
      let j = i + 1;
      while (j < sql.length) {
        const d = sql[j]!;
        if (isIdChar(d)) {
          j++;
        } else if (d === ":" && sql[j + 1] === ":") {
          j += 2;
        } else if (d === "(" && j > i + 1) {
          const stop = sql.slice(j).search(/[\s)]/);
          if (stop < 0) j = sql.length;
          else j += stop + (sql[j + stop] === ")" ? 1 : 0);
          break;
        } else {
          break;
        }
      }
      push(j > i + 1 ? "param" : "punct", j);
    } else if (isIdChar(c)) {
      // Identifiers, keywords and numbers alike: none of them can contain `;` or a parameter.
      let j = i + 1;
      while (j < sql.length && isIdChar(sql[j]!)) j++;
      push("word", j);
    } else {
      push("punct", i + 1);
    }
  }
  return tokens;
}

/**
 * Splits the tokens at top-level semicolons. The body of CREATE TRIGGER holds statements of its
 * own between BEGIN and END (and CASE ... END may nest inside), so there a semicolon only ends
 * the statement once those blocks are closed.
 */
function splitStatements(tokens: Token[]): Token[][] {
  const statements: Token[][] = [];
  let current: Token[] = [];
  let blockDepth = 0;
  for (const token of tokens) {
    if (token.text === ";" && blockDepth === 0) {
      if (current.length > 0) statements.push(current);
      current = [];
      continue;
    }
    current.push(token);
    if (token.kind === "word" && isCreateTrigger(current)) {
      const word = token.text.toUpperCase();
      if (word === "BEGIN" || word === "CASE") blockDepth++;
      else if (word === "END" && blockDepth > 0) blockDepth--;
    }
  }
  if (current.length > 0) statements.push(current);
  return statements;
}

/** Does the statement start with `[EXPLAIN [QUERY PLAN]] CREATE [TEMP|TEMPORARY] TRIGGER`? */
function isCreateTrigger(statement: Token[]): boolean {
  const words = statement.slice(0, 6).map((t) => (t.kind === "word" ? t.text.toUpperCase() : ""));
  let i = 0;
  if (words[i] === "EXPLAIN") i += words[i + 1] === "QUERY" ? 3 : 1;
  if (words[i++] !== "CREATE") return false;
  if (words[i] === "TEMP" || words[i] === "TEMPORARY") i++;
  return words[i] === "TRIGGER";
}

/** Numbers the parameter markers like sqlite3ExprAssignVarNumber(). */
function parameterNames(statement: Token[]): (string | null)[] {
  const names: (string | null)[] = [];
  const seen = new Set<string>();
  for (const { kind, text } of statement) {
    if (kind !== "param") continue;
    if (text === "?") {
      names.push(null);
    } else if (text.startsWith("?")) {
      const index = Number(text.slice(1));
      if (!(index >= 1 && index <= MAX_VARIABLE_NUMBER)) continue;
      while (names.length < index) names.push(null);
      names[index - 1] ??= text;
    } else if (!seen.has(text)) {
      names.push(text);
    }
    seen.add(text);
  }
  return names;
}

function leadingVerb(statement: Token[]): string | undefined {
  const first = statement[0];
  if (first?.kind !== "word") return undefined;
  const verb = first.text.toUpperCase();
  if (verb !== "WITH") return verb;
  // Skip the common table expressions: the main verb is the first one outside parentheses.
  let depth = 0;
  for (const { kind, text } of statement.slice(1)) {
    if (text === "(") depth++;
    else if (text === ")") depth--;
    else if (depth === 0 && kind === "word" && MAIN_VERBS.has(text.toUpperCase())) {
      return text.toUpperCase();
    }
  }
  return undefined;
}
