// Validate speedscope files against the schema speedscope's npm package ships:
// node validate.js FILE...; exit 0 when every file is valid, 1 otherwise (errors on stderr).
'use strict';
const fs = require('fs');
const path = require('path');
const Ajv = require('ajv');

const schemaPath = path.join(__dirname, 'node_modules', 'speedscope', 'dist', 'release',
	'file-format-schema.json');
const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile(JSON.parse(fs.readFileSync(schemaPath, 'utf8')));
let ok = true;

for (const file of process.argv.slice(2)) {
	let doc;
	try {
		doc = JSON.parse(fs.readFileSync(file, 'utf8'));
	} catch (e) {
		console.error(`${file}: not JSON: ${e.message}`);
		ok = false;
		continue;
	}
	if (!validate(doc)) {
		console.error(`${file}: invalid: ${ajv.errorsText(validate.errors)}`);
		ok = false;
	}
}
process.exit(ok ? 0 : 1);
