import { answerBody, IAnswer, NOT_LOADED, refusal } from '../src/answers';

function answer(status: number, text: string, contentType = 'application/json'): IAnswer {
  return { status, statusText: status === 404 ? 'Not Found' : 'Bad Request', contentType, text };
}

describe('refusal', () => {
  it('takes the message and field of the server', () => {
    const body = JSON.stringify({ message: 'when: not a time', field: 'when' });
    expect(refusal(answer(400, body))).toEqual({ message: 'when: not a time', field: 'when' });
    const notFound = JSON.stringify({ message: "job 'x' not found" });
    expect(refusal(answer(404, notFound))).toEqual({ message: "job 'x' not found" });
  });

  it('says the server extension is not there when the server answers its HTML 404 page', () => {
    // Before: "Unexpected token '<', "<!DOCTYPE "... is not valid JSON".
    const page = answer(404, '<!DOCTYPE HTML>\n<html>', 'text/html');
    expect(refusal(page)).toEqual({ message: NOT_LOADED });
    expect(NOT_LOADED).toContain('installed and enabled');
  });

  it('names the status of any other answer it cannot read', () => {
    expect(refusal(answer(400, '<html>', 'text/html'))).toEqual({
      message: 'HTTP 400 Bad Request'
    });
    expect(refusal(answer(400, '{not json'))).toEqual({ message: 'HTTP 400 Bad Request' });
  });
});

describe('answerBody', () => {
  it('reads JSON only', () => {
    expect(answerBody(answer(200, '{"jobs": []}'))).toEqual({ jobs: [] });
    expect(answerBody(answer(200, ''))).toBeNull();
    expect(answerBody(answer(200, '<html>', 'text/html'))).toBeNull();
  });
});
