/** A public workspace package (see public-packages.mjs). */
export interface PublicPackage {
  /** The package name, e.g. `@lease-fence/client`. */
  readonly name: string;
  /** The package version (semver). */
  readonly version: string;
  /** The package's absolute directory. */
  readonly dir: string;
  /** Its parsed package.json. */
  readonly manifest: Readonly<Record<string, unknown>>;
}
/** Every workspace package whose package.json is not `"private": true`, sorted by directory. */
export declare function publicPackages(root: string): PublicPackage[];
