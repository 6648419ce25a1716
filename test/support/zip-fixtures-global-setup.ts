// globalSetup of the workerd project: the test ZIPs, made by Python in Node, handed to the tests
// inside workerd (which cannot run Python) through vitest's provide/inject.
import type { TestProject } from "vitest/node";
import { type ZipFixtures, zipFixtures } from "./zip-fixtures.ts";

declare module "vitest" {
  export interface ProvidedContext {
    zipFixtures: ZipFixtures;
  }
}

export default function setup(project: TestProject) {
  project.provide("zipFixtures", zipFixtures());
}
