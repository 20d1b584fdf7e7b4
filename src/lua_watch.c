/*
 * lua_watch.c - what changed in one folder, from inotify(7).
 *
 *	local w = raymond.dir_watch(path)   -> watch | nil, message
 *	w:changes()   -> { [name] = true, ... } | nil
 *	w:close()     also done by __gc and __close
 *
 * changes() takes, without waiting, the events the kernel queued since
 * the watch was made or changes() last ran: the names of the folder's
 * entries created, written, changed in their attributes, moved in or
 * out, or removed.  The kernel queues a write's event before the write
 * returns, so a change made before the call is in what it gives.
 *
 * It gives nil when that list cannot be whole: the kernel's queue
 * overflowed, or the folder at `path` was removed, moved or replaced
 * (the folder there now, if any, is not the watched one).  The caller
 * then reads everything afresh, with a new watch.  The folder's identity
 * is taken before the watch is added, so a folder replaced in between
 * is seen as replaced at the first call.
 *
 * A watch sees changes made through the folder: a file changed through
 * a hard link in another folder, or written through a shared mapping,
 * is not reported.
 */
#include "lua_priv.h"

#include <errno.h>
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#define WATCH_MT "raymond.dir_watch"

#define WATCH_EVENTS (IN_CREATE | IN_DELETE | IN_MODIFY | IN_ATTRIB | \
    IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE_SELF | \
    IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW)

/* Events after which the list of changes is not whole. */
#define WATCH_LOST (IN_Q_OVERFLOW | IN_IGNORED | IN_DELETE_SELF | \
    IN_MOVE_SELF | IN_UNMOUNT)

struct watch {
	int fd;
	int lost;		/* a change may have gone unreported */
	dev_t dev;		/* the watched folder */
	ino_t ino;
	char *path;
};

static void
watch_free(struct watch *w)
{
	if (w == NULL)
		return;
	if (w->fd >= 0)
		close(w->fd);
	free(w->path);
	free(w);
}

static int
api_dir_watch(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	struct watch **wp = lua_newuserdatauv(L, sizeof(*wp), 0);
	struct watch *w;
	struct stat st;
	int e = 0;

	*wp = NULL;
	luaL_setmetatable(L, WATCH_MT);
	if ((w = calloc(1, sizeof(*w))) == NULL)
		return luaL_error(L, "out of memory");
	w->fd = -1;
	if ((w->path = strdup(path)) == NULL) {
		e = ENOMEM;
		goto fail;
	}
	if (lstat(path, &st) < 0) {
		e = errno;
		goto fail;
	}
	if (!S_ISDIR(st.st_mode)) {
		e = ENOTDIR;
		goto fail;
	}
	if ((w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0 ||
	    inotify_add_watch(w->fd, path, WATCH_EVENTS) < 0) {
		e = errno;
		goto fail;
	}
	w->dev = st.st_dev;
	w->ino = st.st_ino;
	*wp = w;
	return 1;
fail:
	watch_free(w);
	lua_pushnil(L);
	lua_pushfstring(L, "cannot watch '%s': %s", path, strerror(e));
	return 2;
}

static struct watch *
check_watch(lua_State *L)
{
	return *(struct watch **)ray__check_open(L, 1, WATCH_MT, "watch");
}

/* Take the queued events into the table at the top of the stack. */
static void
drain(lua_State *L, struct watch *w)
{
	/* Aligned for struct inotify_event, as inotify(7) shows. */
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	ssize_t n;
	char *p;

	while (!w->lost) {
		n = read(w->fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			w->lost = 1;
			return;
		}
		for (p = buf; p < buf + n; p += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)p;
			if (ev->mask & WATCH_LOST) {
				w->lost = 1;
				return;
			}
			if (ev->len > 0 && ev->name[0] != '\0') {
				lua_pushboolean(L, 1);
				lua_setfield(L, -2, ev->name);
			}
		}
	}
}

static int
api_watch_changes(lua_State *L)
{
	struct watch *w = check_watch(L);
	struct stat st;

	lua_newtable(L);
	drain(L, w);
	if (!w->lost && (lstat(w->path, &st) < 0 || st.st_dev != w->dev ||
	    st.st_ino != w->ino))
		w->lost = 1;
	if (w->lost)
		lua_pushnil(L);
	return 1;
}

static int
api_watch_close(lua_State *L)
{
	struct watch **wp = luaL_checkudata(L, 1, WATCH_MT);

	watch_free(*wp);
	*wp = NULL;
	return 0;
}

static const luaL_Reg watch_methods[] = {
	{ "changes", api_watch_changes },
	{ "close", api_watch_close },
	{ "__gc", api_watch_close },
	{ "__close", api_watch_close },
	{ NULL, NULL },
};

/* On the raymond table at -1. */
void
ray__watch_register(lua_State *L)
{
	ray__new_class(L, WATCH_MT, watch_methods);
	lua_pushcfunction(L, api_dir_watch);
	lua_setfield(L, -2, "dir_watch");
}
