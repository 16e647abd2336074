import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * Every relative link and `#anchor` of the README and the pages under docs/ must point at a file that exists and,
 * for a Markdown file, at one of its headings: the README links into docs/ and the pages link to each other, so a
 * moved section or a renamed heading must not leave a dead link behind.
 */

const root = process.cwd();

function documents(): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name));
  return ['README.md', ...docs, join('clients', 'typescript', 'README.md')];
}

/** The text outside fenced code blocks, with inline code spans blanked (their brackets are not links). */
function prose(markdown: string): string[] {
  const lines: string[] = [];
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const marker = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (marker && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
      lines.push('');
      continue;
    }
    lines.push(fence === undefined ? line.replace(/(`+)(?:(?!\1).)+?\1/g, 'code') : '');
  }
  return lines;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const marker = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (marker && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
      continue;
    }
    const heading = fence === undefined ? /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line) : null;
    if (!heading) continue;
    const text = heading[1].replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** The relative links of one document that do not resolve, as `file:line: target (why)`. */
function brokenLinks(file: string, markdown: string, read: (path: string) => string | undefined): string[] {
  const problems: string[] = [];
  prose(markdown).forEach((line, index) => {
    for (const match of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = match[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const [path, anchor] = target.split('#', 2) as [string, string | undefined];
      const where = `${file}:${index + 1}: ${target}`;
      const resolved = path === '' ? file : join(dirname(file), decodeURIComponent(path)).replace(/\/+$/, '');
      const text = path === '' ? markdown : read(resolved);
      if (text === undefined) {
        problems.push(`${where} (no such file)`);
        continue;
      }
      if (anchor !== undefined && anchor !== '') {
        if (!resolved.endsWith('.md')) problems.push(`${where} (an anchor into a file that is not Markdown)`);
        else if (!headingAnchors(text).has(decodeURIComponent(anchor))) problems.push(`${where} (no such heading)`);
      }
    }
  });
  return problems;
}

/** A file's text; '' for a directory (it exists, and has no headings); undefined when absent or outside the tree. */
function readFromTree(path: string): string | undefined {
  const full = resolve(root, path);
  if (relative(root, full).startsWith('..') || !existsSync(full)) return undefined;
  return statSync(full).isDirectory() ? '' : readFileSync(full, 'utf8');
}

describe('links in README.md and docs/', () => {
  it('checks the README and every page under docs/', () => {
    const files = documents();
    expect(files).toEqual(expect.arrayContaining(['README.md', join('docs', 'protocol.md'), join('docs', 'extending.md')]));
  });

  it.each(documents())('%s: every relative link and anchor resolves', (file) => {
    expect(brokenLinks(file, readFileSync(join(root, file), 'utf8'), readFromTree)).toEqual([]);
  });
});

describe('the link checker', () => {
  const tree: Record<string, string> = {
    'README.md': '# Title\n\n## Quick start\n',
    'docs/page.md': '# Page\n\n## The `local` model\n\n## Errors (HTTP)\n\n## Errors (HTTP)\n',
    'docs/screenshots': '',
  };
  const read = (path: string) => tree[path];

  it('derives anchors as GitHub does', () => {
    expect([...headingAnchors(tree['docs/page.md'])]).toEqual(['page', 'the-local-model', 'errors-http', 'errors-http-1']);
    expect(headingAnchors('### AI SDK (useChat)\n## `bench:ingest`\n## 退货政策')).toEqual(new Set(['ai-sdk-usechat', 'benchingest', '退货政策']));
  });

  it('accepts links to existing files, folders and headings, and external links', () => {
    const page = [
      tree['docs/page.md'],
      'See [the start](../README.md#quick-start), [the model](#the-local-model), [again](page.md#errors-http-1),',
      '![a screen](screenshots/) and [elsewhere](https://example.com/x.md#nothing).',
    ].join('\n');
    expect(brokenLinks('docs/page.md', page, read)).toEqual([]);
  });

  it('reports a missing file, a missing heading and an anchor of the same page that is gone', () => {
    const page = ['[gone](routes.md) [wrong](../README.md#configuration)', '[here](#nowhere)'].join('\n');
    expect(brokenLinks('docs/page.md', page, read)).toEqual([
      'docs/page.md:1: routes.md (no such file)',
      'docs/page.md:1: ../README.md#configuration (no such heading)',
      'docs/page.md:2: #nowhere (no such heading)',
    ]);
  });

  it('ignores links inside code', () => {
    const page = '`[not](a-link.md)`\n\n```md\n[nor](this.md)\n```\n';
    expect(brokenLinks('docs/page.md', page, read)).toEqual([]);
  });
});
