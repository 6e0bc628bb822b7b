// Shared by the client scripts: where the server is (COHORT_URL, e.g. http://127.0.0.1:8080,
// set by the CTest that started `cohort serve`; these scripts start nothing), which model it
// serves (COHORT_MODEL), and a tiny check() that names what failed.
import assert from 'node:assert/strict';

export const url = process.env.COHORT_URL;
export const model = process.env.COHORT_MODEL;
if (!url || !model) {
  console.error('set COHORT_URL (e.g. http://127.0.0.1:8080) and COHORT_MODEL');
  process.exit(2);
}

export { assert };

// Runs the named steps in order, printing each; the first failure ends the script with 1.
export async function steps(list) {
  for (const [name, fn] of list) {
    try {
      await fn();
      console.log(`ok   ${name}`);
    } catch (err) {
      console.error(`FAIL ${name}: ${err?.stack ?? err}`);
      process.exit(1);
    }
  }
}

// Usage that adds up: completion tokens in (0, max], a positive prompt, and the total.
export function checkUsage(prompt, completion, total, max) {
  assert.ok(Number.isInteger(prompt) && prompt > 0, `prompt tokens ${prompt}`);
  assert.ok(Number.isInteger(completion) && completion > 0, `completion tokens ${completion}`);
  if (max !== undefined) assert.ok(completion <= max, `completion tokens ${completion} > ${max}`);
  if (total !== undefined) assert.equal(total, prompt + completion);
}
