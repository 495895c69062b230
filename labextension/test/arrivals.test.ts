import { Arrivals } from '../src/arrivals';

describe('Arrivals', () => {
  it('gives a read what was recorded while it was on its way, and only that', async () => {
    const arrivals = new Arrivals<string>();
    arrivals.record('before');
    let answer: (value: number) => void = () => undefined;
    const reading = arrivals.during(() => new Promise<number>(resolve => (answer = resolve)));
    arrivals.record('meanwhile');
    answer(7);
    const result = await reading;
    arrivals.record('after');
    expect(result).toEqual({ answer: 7, arrived: ['meanwhile'] });
  });

  it('gives each of two overlapping reads what arrived during its own flight', async () => {
    const arrivals = new Arrivals<string>();
    const answers: ((value: string) => void)[] = [];
    const read = () => new Promise<string>(resolve => answers.push(resolve));
    const first = arrivals.during(read);
    arrivals.record('a');
    const second = arrivals.during(read);
    arrivals.record('b');
    answers[0]('first');
    expect((await first).arrived).toEqual(['a', 'b']);
    arrivals.record('c');
    answers[1]('second');
    expect((await second).arrived).toEqual(['b', 'c']);
  });

  it('passes a failed read on', async () => {
    const arrivals = new Arrivals<string>();
    await expect(arrivals.during(() => Promise.reject(new Error('gone')))).rejects.toThrow('gone');
  });
});
