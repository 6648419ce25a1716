// A storage's `addition` (its driver-specific settings, a JSON object in a string) as drivers read
// it: through the driver's template, so a missing key takes the item's default.
import { CheckFailed, type Addition, type Driver } from "./types.ts";

/** The addition as the driver's template reads it: a missing key takes the item's default. */
export function readAddition(driver: Driver, additionJson: string): Addition {
  const values = parseAddition(additionJson);
  if (values === null) throw new CheckFailed("addition is not a JSON object");
  const defaults = new Map(driver.additional.map((item) => [item.name, item.default]));
  const text = (name: string) => {
    const value = values[name];
    return value === undefined || value === null ? (defaults.get(name) ?? "") : String(value);
  };
  return { text, flag: (name) => text(name) === "true" };
}

/** The object an `addition` string holds, or null when it holds anything else. */
export function parseAddition(additionJson: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(additionJson);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

export function requireText(addition: Addition, name: string): string {
  const value = addition.text(name);
  if (value === "") throw new CheckFailed(`${name} is required`);
  return value;
}
