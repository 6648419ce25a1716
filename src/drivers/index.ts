// The driver registry: every driver Gatehouse carries, by name, and the templates it publishes
// (GET /api/admin/driver/*). A new driver is one file and one line here.
import { alias } from "./alias.ts";
import { crypt } from "./crypt.ts";
import { ftp } from "./ftp.ts";
import { commonItems } from "./items.ts";
import { local } from "./local.ts";
import { r2 } from "./r2.ts";
import { s3 } from "./s3.ts";
import { sftp } from "./sftp.ts";
import { smb } from "./smb.ts";
import type { Driver, DriverConfig, DriverItem } from "./types.ts";
import { urlTree } from "./url-tree.ts";
import { virtual } from "./virtual.ts";
import { webDav } from "./webdav.ts";

/** In alphabetical order, so `names` is stable (AList's is Go map order, random per call). */
const DRIVERS: readonly Driver[] = [alias, crypt, ftp, local, r2, s3, sftp, smb, urlTree, virtual, webDav];

const BY_NAME = new Map(DRIVERS.map((driver) => [driver.config.name, driver]));

export interface DriverInfo {
  common: DriverItem[];
  additional: DriverItem[];
  config: DriverConfig;
}

export const allDrivers = (): readonly Driver[] => DRIVERS;

export const driverNames = (): string[] => DRIVERS.map((driver) => driver.config.name);

export const findDriver = (name: string): Driver | undefined => BY_NAME.get(name);

/** The reply to a driver name the registry does not know (AList's text). */
export const driverNotFound = (name: string) => `driver [${name}] not found`;

export function driverInfo(driver: Driver): DriverInfo {
  return { common: commonItems(driver), additional: driver.additional, config: driver.config };
}
