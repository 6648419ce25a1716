/**
 * Go's path.Clean on an absolute path, as AList applies it to mount paths, base paths and role
 * scopes: backslashes become slashes, `//`, `.` and `..` are resolved, no trailing slash.
 */
export function cleanPath(path: string): string {
  const segments: string[] = [];
  for (const segment of path.replace(/\\/g, "/").split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") segments.pop();
    else segments.push(segment);
  }
  return `/${segments.join("/")}`;
}
