import { chosenOption, setAsideSources } from './clarification.js';

const QUESTION = {
  options: ['Aurora X1 Router — User Manual', 'Aurora X2 Mesh System — User Manual'],
  option_sources: ['aurora-x1-router-manual.md', 'aurora-x2-mesh-manual.md'],
};

describe('an answer to a choice', () => {
  it.each([
    ['its title', 'Aurora X2 Mesh System — User Manual'],
    ['its number', '2'],
    ['its file name', 'aurora-x2-mesh-manual.md'],
    ['its file name without extension', 'aurora-x2-mesh-manual'],
    ['a word only its title holds', 'x2'],
  ])('picks the option by %s and sets the others aside', (_how, answer) => {
    expect(chosenOption(answer, QUESTION)).toMatch(/^Aurora X2 Mesh System — User Manual /);
    expect(setAsideSources(answer, QUESTION)).toEqual(['aurora-x1-router-manual.md']);
  });

  it.each([
    ['a word every option holds', 'Aurora'],
    ['a number out of range', '3'],
    ['free text', 'the one with three nodes'],
    ['part of a word', 'X'],
  ])('picks nothing for %s: it is searched as it is and nothing is set aside', (_how, answer) => {
    expect(chosenOption(answer, QUESTION)).toBe(answer);
    expect(setAsideSources(answer, QUESTION)).toEqual([]);
  });
});
