package capture

import (
	"context"
	"crypto/rand"
)

// MetaKey is the key of the _meta entry that carries a call's token in a
// request's params, for transports where the capture cannot see the
// call's context (stdio). [Meta] returns the entry for a context made by
// [WithCall]. The server sees the token; it is random and means nothing
// to anyone but this process.
const MetaKey = "com.github.mcplrefs.refcore/call"

type callKey struct{}

// WithCall returns a copy of ctx that marks one call: make the call with
// it, then take its result from the [Capture] with the same context. Over
// streamable HTTP the context is all it takes, because the SDKs hand it
// to each HTTP request; over stdio, also put [Meta] in the call's _meta.
// Each WithCall makes a new token; a context made by WithCall from
// another one marks a new call.
func WithCall(ctx context.Context) context.Context {
	return context.WithValue(ctx, callKey{}, rand.Text())
}

// Meta returns the _meta entry that names the call ctx marks, to put in
// the params of a request the capture can only see as bytes (over stdio):
// a map of one entry, [MetaKey] to the call's token. It returns nil when
// ctx marks no call.
func Meta(ctx context.Context) map[string]any {
	t := tokenOf(ctx)
	if t == "" {
		return nil
	}
	return map[string]any{MetaKey: t}
}

// tokenOf returns the token of the call ctx marks, or "".
func tokenOf(ctx context.Context) string {
	if ctx == nil {
		return ""
	}
	t, _ := ctx.Value(callKey{}).(string)
	return t
}
