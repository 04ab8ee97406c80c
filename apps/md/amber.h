/*
 * amber.h - AMBER NetCDF files (the AMBER trajectory and restart
 * conventions, version 1.0): coordinates in angstrom, velocities in
 * angstrom/picosecond, time in picoseconds, cell lengths and angles.
 * Reduced units map to them as for argon: sigma 3.405 angstrom,
 * epsilon/k 119.8 K, mass 39.948 u (time unit 2.156 ps).
 */
#ifndef MD_AMBER_H
#define MD_AMBER_H

#include <stdio.h>
#include "md.h"

/* Reads a restart into s (allocated here). Velocities are read when the
 * file has them (*has_velocities). Returns 0, or 1 with a message naming
 * the file and what is wrong: not a netCDF file, not the AMBER
 * conventions, a missing or misshapen variable, units other than the
 * conventions', a cell that is not a cube, values that are not finite. */
int md_restart_read(const char *path, md_system *s, int *has_velocities, char *err, size_t errlen);
int md_restart_write(const char *path, const md_system *s, char *err, size_t errlen);

typedef struct md_trajectory {
    int ncid, coords, cell_lengths, cell_angles, time;
    size_t frame;
    float *buf;
    char path[1024];
} md_trajectory;

int md_trajectory_create(md_trajectory *t, const char *path, long n, char *err, size_t errlen);
int md_trajectory_append(md_trajectory *t, const md_system *s, char *err, size_t errlen);
int md_trajectory_close(md_trajectory *t, char *err, size_t errlen);

#endif
