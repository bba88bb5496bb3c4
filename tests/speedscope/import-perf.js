// Import perf script text with speedscope's own importer (the one its web page runs on a
// dropped file), headless: node import-perf.js FILE. Prints each profile (a thread) as
// "profile<TAB>NAME<TAB>TOTAL", then its frames as "frame<TAB>TOTAL<TAB>SELF<TAB>NAME<TAB>FILE"
// (weights in seconds: speedscope weighs a perf script sample by the time to its neighbours,
// and a thread's only sample as 1).
//
// The release bundle is one closure; its importers are a lazily initialized module the page
// loads on first use. This runs the bundle in a VM context without a page, exposing that
// module instead of starting the user interface. Names are read from the bundle, not fixed.
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');

const dir = path.join(__dirname, 'node_modules', 'speedscope', 'dist', 'release');
const bundle = fs.readdirSync(dir).find(f => /^speedscope-.*\.js$/.test(f));
let src = fs.readFileSync(path.join(dir, bundle), 'utf8');
const exp = /\$l\((\w+),\{importFromFileSystemDirectoryEntry:/.exec(src);
const init = exp && new RegExp('Promise\\.resolve\\(\\)\\.then\\(\\(\\)=>\\((\\w+)\\(\\),' + exp[1] +
	'\\)\\)').exec(src);
const ui = src.lastIndexOf('console.log(`speedscope v');
if (!exp || !init || ui < 0) {
	console.error(`${bundle}: cannot find speedscope's importers in this version`);
	process.exit(2);
}
src = src.slice(0, ui) + `globalThis.__importers=(${init[1]}(),${exp[1]});})();`;
// what the bundle touches of a page while it loads: nothing it uses for importing
const stub = new Proxy(function () {}, {
	get: (t, k) => (k === Symbol.toPrimitive ? () => '' : stub),
	apply: () => stub,
	construct: () => stub,
});
const ctx = {
	console: { log() {}, warn() {}, error: console.error }, URL, TextDecoder, TextEncoder,
	setTimeout, clearTimeout, Promise, performance, window: stub, document: stub,
	navigator: { userAgent: 'node' }, location: { hash: '', search: '', href: '' },
	localStorage: stub, requestAnimationFrame: stub,
};
ctx.globalThis = ctx;
ctx.self = ctx;
vm.createContext(ctx);
vm.runInContext(src, ctx);

const text = fs.readFileSync(process.argv[2], 'utf8');
ctx.__importers.importProfileGroupFromText('profile.linux-perf.txt', text).then(g => {
	if (!g) {
		console.error('speedscope could not import the file');
		process.exit(1);
	}
	for (const p of g.profiles) {
		console.log(`profile\t${p.getName()}\t${p.getTotalWeight()}`);
		p.forEachFrame(f => console.log(`frame\t${f.getTotalWeight()}\t${f.getSelfWeight()}\t${f.name}\t${f.file}`));
	}
}).catch(e => {
	console.error(e);
	process.exit(1);
});
