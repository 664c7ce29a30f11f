import { describe, expect, it } from 'vitest';
import { applyChatTemplate, selectChatTemplate } from './chat-template';
import { loadHfFolder } from './folder';
import { fixtureFolder, llamaTokenizerFiles } from './node-fixture';
import { datasetTaskSource } from '../train/task-source';

/** The chat template of meta-llama/Llama-2-7b-chat-hf's tokenizer_config.json. */
const LLAMA2_CHAT =
  "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message " +
  "= messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set system_message = " +
  "false %}{% endif %}{% for message in loop_messages %}{% if (message['role'] == 'user') != " +
  "(loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate " +
  "user/assistant/user/assistant/...') }}{% endif %}{% if loop.index0 == 0 and system_message != false " +
  "%}{% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}{% " +
  "else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ " +
  "bos_token + '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ " +
  "' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}";

/** ChatML, with a generation prompt. */
const CHATML =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + " +
  "'<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% " +
  'endif %}';

const chat = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'What is 2+2? ' },
  { role: 'assistant', content: '4' },
  { role: 'user', content: 'And 3+3?' },
];

describe('applyChatTemplate', () => {
  it('renders the Llama 2 chat template as transformers does', () => {
    expect(applyChatTemplate(LLAMA2_CHAT, chat, { bosToken: '<s>', eosToken: '</s>' })).toBe(
      '<s>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nWhat is 2+2? [/INST] 4 </s><s>[INST] And 3+3? [/INST]',
    );
    // For the pipeline, which adds BOS itself: no BOS text.
    expect(applyChatTemplate(LLAMA2_CHAT, chat.slice(1, 2))).toBe('[INST] What is 2+2? [/INST]');
    expect(() => applyChatTemplate(LLAMA2_CHAT, [{ role: 'assistant', content: 'hi' }])).toThrow(
      /Conversation roles must alternate/,
    );
  });

  it('adds the generation prompt when asked', () => {
    const msgs = [{ role: 'user', content: 'Hi' }];
    expect(applyChatTemplate(CHATML, msgs)).toBe('<|im_start|>user\nHi<|im_end|>\n');
    expect(applyChatTemplate(CHATML, msgs, { addGenerationPrompt: true })).toBe(
      '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n',
    );
  });

  it('selects the template of a chat_template field (string or named list)', () => {
    expect(selectChatTemplate(undefined)).toEqual({ ok: true, template: undefined });
    expect(
      selectChatTemplate([
        { name: 'tool_use', template: 'x' },
        { name: 'default', template: CHATML },
      ]),
    ).toEqual({ ok: true, template: CHATML });
    expect(selectChatTemplate([{ name: 'tool_use', template: 'x' }])).toMatchObject({ ok: false });
  });
});

describe('loadHfFolder and chat templates', () => {
  const { tokenizerConfig } = llamaTokenizerFiles();

  it('returns tokenizer_config.json chat_template, or chat_template.jinja', async () => {
    const withField = fixtureFolder(
      { tiedEmbeddings: true },
      { tokenizerConfig: { ...tokenizerConfig, chat_template: LLAMA2_CHAT } },
    );
    expect((await loadHfFolder(withField.files)).chatTemplate).toBe(LLAMA2_CHAT);
    const withFile = fixtureFolder({ tiedEmbeddings: true });
    withFile.files.set('chat_template.jinja', new TextEncoder().encode(CHATML));
    const loaded = await loadHfFolder(withFile.files);
    expect(loaded.chatTemplate).toBe(CHATML);
    const prompt = applyChatTemplate(loaded.chatTemplate!, [{ role: 'user', content: 'Hi' }], {
      addGenerationPrompt: true,
    });
    expect(loaded.tokenizer.decode(loaded.tokenizer.encode(prompt))).toBe(prompt);
    // The file's template rides in the tokenizer's config, so a checkpoint of the run keeps it.
    expect(loaded.tokenizer.sources.tokenizerConfig?.chat_template).toBe(CHATML);
  });

  it("a dataset's chat-list prompts sample from the base's template; string prompts, and a base without one, from the text", async () => {
    const withFile = fixtureFolder({ tiedEmbeddings: true });
    withFile.files.set('chat_template.jinja', new TextEncoder().encode(CHATML));
    const tok = (await loadHfFolder(withFile.files)).tokenizer;
    const plain = (await loadHfFolder(fixtureFolder({ tiedEmbeddings: true }).files)).tokenizer;
    const records = [
      {
        prompt: 'What is 2+2?',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'What is 2+2?' },
        ],
        answer: '4',
      },
      { prompt: 'What is 3+3?', answer: '6' },
    ];
    const d = { name: 'chat.jsonl', format: 'jsonl' as const, reward: { kind: 'math' as const }, heldOut: 0, records };
    const ids = (t: typeof tok) => {
      const source = datasetTaskSource(d, { seed: 1, evalN: 1, maxNew: 8 }, t, 256, null);
      return records.map((_, record) =>
        Array.from(source.promptIds({ ...records[record], id: String(record), record })),
      );
    };
    const bosThen = (t: typeof tok, text: string) => [t.bos, ...t.encode(text)];
    expect(ids(tok)).toEqual([
      bosThen(
        tok,
        '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n',
      ),
      bosThen(tok, 'What is 3+3?'),
    ]);
    expect(ids(plain)).toEqual([bosThen(plain, 'What is 2+2?'), bosThen(plain, 'What is 3+3?')]);
  });

  it('refuses a template that does not parse, naming the file and the field', async () => {
    const bad = fixtureFolder(
      { tiedEmbeddings: true },
      { tokenizerConfig: { ...tokenizerConfig, chat_template: '{% for m in messages %}' } },
    );
    await expect(loadHfFolder(bad.files)).rejects.toThrow(
      /^tokenizer_config\.json: chat_template: not a template @huggingface\/jinja can parse: /,
    );
  });
});
