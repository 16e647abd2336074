import { FileTypeValidator } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import semver from 'semver';

interface LockEntry {
  version?: string;
  engines?: { node?: unknown } | string[];
  hasInstallScript?: boolean;
}

/** The oldest Node.js the project supports (package.json `engines.node`, >=20.19). */
const OLDEST_NODE = semver.minVersion(JSON.parse(readFileSync('package.json', 'utf8')).engines.node)!.version;

describe('Dependencies on the oldest supported Node.js', () => {
  it('every package in package-lock.json accepts it, so npm ci prints no EBADENGINE (the overrides in package.json pin those that would not)', () => {
    const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, LockEntry> };
    const refusing = Object.entries(lock.packages)
      .filter(([, entry]) => !Array.isArray(entry.engines) && typeof entry.engines?.node === 'string' && !semver.satisfies(OLDEST_NODE, entry.engines.node))
      .map(([where, entry]) => `${where}@${entry.version}: node ${(entry.engines as { node: string }).node}`);
    expect(OLDEST_NODE).toBe('20.19.0');
    expect(refusing).toEqual([]);
  });

  it("every package with an install script has its entry in package.json's allowScripts, so npm 11's install warns of none", () => {
    const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, LockEntry> };
    const { allowScripts = {} } = JSON.parse(readFileSync('package.json', 'utf8')) as { allowScripts?: Record<string, boolean> };
    const withScripts = Object.entries(lock.packages)
      .filter(([where, entry]) => where && entry.hasInstallScript)
      .map(([where]) => where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(withScripts.length).toBeGreaterThan(0);
    expect(withScripts.filter((name) => !Object.hasOwn(allowScripts, name))).toEqual([]);
  });

  // file-type is pinned to 21 (22 wants Node 22); @nestjs/common imports it only here, when a file is validated.
  it("@nestjs/common's FileTypeValidator loads the pinned file-type and tells a PNG from text", async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000' + '1f15c4890000000d49444154789c6360000000000200017e2f0a4a0000000049454e44ae426082', 'hex');
    const validator = new FileTypeValidator({ fileType: 'image/png' });
    const file = (buffer: Buffer, mimetype: string) => ({ buffer, mimetype, size: buffer.length }) as Parameters<FileTypeValidator['isValid']>[0];
    await expect(validator.isValid(file(png, 'image/png'))).resolves.toBe(true);
    // Claimed to be a PNG, but its bytes are not: only the magic-number check (file-type) can tell.
    await expect(validator.isValid(file(Buffer.from('plain text, not an image at all'), 'image/png'))).resolves.toBe(false);
  });
});
