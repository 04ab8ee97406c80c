/* subprocess.c - running the system C compiler and other programs. */
#include "subprocess.h"
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

const char *tess_c_compiler(void) {
    const char *cc = getenv("TESSERA_CC");
    if (!cc || !*cc) cc = getenv("CC");
    return cc && *cc ? cc : "cc";
}

int tess_run_capture(char *const argv[], char **output) {
    *output = NULL;
    char path[] = "/tmp/tessera-cc-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return -1;
    unlink(path);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd, 1);
    posix_spawn_file_actions_adddup2(&fa, fd, 2);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    int status = -1;
    if (rc == 0) {
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    } else {
        dprintf(fd, "cannot run %s: %s\n", argv[0], strerror(rc));
    }
    off_t len = lseek(fd, 0, SEEK_END);
    char *text = malloc((size_t)len + 1);
    if (text) {
        ssize_t got = pread(fd, text, (size_t)len, 0);
        text[got > 0 ? got : 0] = '\0';
    }
    close(fd);
    *output = text;
    return rc == 0 ? status : -1;
}
