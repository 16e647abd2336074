import { groupNameProblem, groupsOfClaim, MAX_GROUPS } from './groups.js';

describe('groups of a token claim', () => {
  it('reads none, one name or an array of names, each once, compared as sent', () => {
    expect(groupsOfClaim(undefined)).toEqual({ groups: [] });
    expect(groupsOfClaim(null)).toEqual({ groups: [] });
    expect(groupsOfClaim('finance')).toEqual({ groups: ['finance'] });
    expect(groupsOfClaim(['finance', 'Finance', '财务', 'finance', '/org/team a'])).toEqual({ groups: ['finance', 'Finance', '财务', '/org/team a'] });
  });

  it.each([
    ['a number', 42],
    ['an object', { name: 'finance' }],
    ['a non-string entry', ['finance', 7]],
    ['an empty name', ['']],
    ['a NUL', ['fin\u0000ance']],
    ['a lone surrogate', ['fin\ud800ance']],
    ['a control character', ['fin\nance']],
    ['an invisible-only name', ['\u200b']],
    ['a name over 128 characters', ['g'.repeat(129)]],
    ['too many groups', Array.from({ length: MAX_GROUPS + 1 }, (_, i) => `g${i}`)],
  ])('refuses %s', (_label, claim) => {
    expect(groupsOfClaim(claim)).toEqual({ problem: expect.any(String) });
  });

  it('names the rule a group name breaks', () => {
    expect(groupNameProblem('ok')).toBeNull();
    expect(groupNameProblem('a\ud800')).toMatch(/surrogate/);
    expect(groupNameProblem(5)).toMatch(/non-empty string/);
  });
});
