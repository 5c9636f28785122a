package httpapi

import "context"

func withRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey, id)
}

func requestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

func contextWith(ctx context.Context, k, v any) context.Context { return context.WithValue(ctx, k, v) }
