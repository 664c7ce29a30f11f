import { describe, expect, it } from 'vitest';
import { applyChatTemplate, selectChatTemplate } from './chat-template';
import { loadHfFolder } from './folder';
import { fixtureFolder, llamaTokenizerFiles } from './node-fixture';

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
