// llmhost.vllm.gateway: the checks nginx makes before a replica sees a request (njs 0.7 and later).
// Installed by the gateway role; edits are overwritten.
var crypto = require('crypto');

// $llmhost_key_sha256: the SHA-256 of the bearer key; clients.conf maps it to the client's name.
// The key itself is never stored, logged or passed on. The scheme's name is case-insensitive (RFC 7235).
function keyHash(r) {
    var m = /^bearer +([^ ]+)$/i.exec(r.headersIn.Authorization || '');
    return m ? crypto.createHash('sha256').update(m[1]).digest('hex') : '';
}

function refuse(r, code, type, message) {
    r.headersOut['Content-Type'] = 'application/json';
    r.return(code, JSON.stringify({error: {message: message, type: type, code: code}}) + '\n');
}

function wholeError(name, v, limit) {
    if (typeof v !== 'number' || !isFinite(v) || v !== Math.floor(v) || v < 1 || (limit > 0 && v > limit)) {
        return name + ' must be a whole number from 1' + (limit > 0 ? ' to ' + limit : ' up') + ', got ' + JSON.stringify(v);
    }
    return '';
}

// The tokens a request may make, all its sequences together (n, best_of): each field within the limit, and
// sequences times max_tokens within it too. A request of several sequences must say its max_tokens.
function tokensError(body, limit) {
    var fields = ['max_tokens', 'max_completion_tokens', 'n', 'best_of'];
    var seqs = 1, most = 0;
    for (var i = 0; i < fields.length; i++) {
        var v = body[fields[i]];
        if (v === undefined || v === null) {
            continue;
        }
        var err = wholeError(fields[i], v, limit);
        if (err) {
            return err;
        }
        if (i < 2) {
            most = Math.max(most, v);
        } else {
            seqs = Math.max(seqs, v);
        }
    }
    if (limit > 0 && seqs > 1 && (most === 0 || seqs * most > limit)) {
        return 'the request asks for ' + seqs + ' sequences of ' + (most || 'up to ' + limit) + ' tokens; all of them '
            + 'together may be at most ' + limit + ' tokens: set max_tokens to ' + Math.floor(limit / seqs) + ' or less';
    }
    return '';
}

// A number JSON can write but that is not finite (1e999 parses as Infinity): refused wherever it is in the body.
function infiniteField(body) {
    var stack = [[body, '']];
    while (stack.length) {
        var top = stack.pop(), v = top[0];
        if (typeof v === 'number' && !isFinite(v)) {
            return top[1] || 'the body';
        }
        if (v !== null && typeof v === 'object') {
            var keys = Object.keys(v);
            for (var i = 0; i < keys.length; i++) {
                stack.push([v[keys[i]], top[1] ? top[1] + '.' + keys[i] : keys[i]]);
            }
        }
    }
    return '';
}

// js_content of /v1/: the body was read into memory (client_body_buffer_size = client_max_body_size);
// a JSON endpoint's body must be one object, within max_tokens, naming a model a replica serves.
function check(r) {
    if (r.method !== 'POST' || /^multipart\//.test(r.headersIn['Content-Type'] || '')) {
        r.internalRedirect('@llmhost_vllm');
        return;
    }
    var body;
    try {
        body = JSON.parse(r.requestText || '');
    } catch (e) {
        refuse(r, 400, 'invalid_request_error', 'the request body is not JSON');
        return;
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        refuse(r, 400, 'invalid_request_error', 'the request body must be a JSON object');
        return;
    }
    var infinite = infiniteField(body);
    if (infinite) {
        refuse(r, 400, 'invalid_request_error', infinite + ' is not a finite number');
        return;
    }
    var tokens = tokensError(body, Number(r.variables.llmhost_max_tokens));
    if (tokens) {
        refuse(r, 400, 'invalid_request_error', tokens);
        return;
    }
    var models = r.variables.llmhost_models.split(' ');
    if (body.model !== undefined && models.indexOf(body.model) < 0) {
        refuse(r, 404, 'not_found_error', 'the model ' + JSON.stringify(body.model) + ' does not exist here; models: ' + models.join(', '));
        return;
    }
    r.internalRedirect('@llmhost_vllm');
}

export default {keyHash, check};
