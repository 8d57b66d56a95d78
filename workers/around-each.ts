// Each activity of a set called through `around`, the set's other members left as they are: how the worker times its
// steps and counts the ones running.

/** `activities` with each function member called as `around(name, call)`, `call` running the member with its arguments. */
export function aroundEach<A extends object>(activities: A, around: (name: string, call: () => Promise<unknown>) => Promise<unknown>): A {
  return Object.fromEntries(
    Object.entries(activities).map(([name, fn]) => [
      name,
      typeof fn !== 'function' ? fn : (...args: unknown[]) => around(name, () => (fn as (...a: unknown[]) => Promise<unknown>)(...args)),
    ]),
  ) as A;
}
