#define _POSIX_C_SOURCE 200809L
/* The XDMF sidecar of a run file (rtm_output_sidecar): NAME.xmf beside NAME.h5, so that
 * ParaView and VisIt open the volumes with their spacing and origin. XDMF 3: one uniform
 * 3DCoRectMesh grid [nz][ny][nx] (its origin and spacing in z, y, x order, ORIGIN_DXDYDZ),
 * the snapshots of each field a temporal collection whose steps read their slab of the
 * series through a HyperSlab, the other volumes (image, illumination, ...) node attributes
 * of one more grid. The data stay in NAME.h5, named by file name so the two move together. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rtm_io_impl.h"

/* `in` with XML's five special characters as entities, into `out` (the file name comes from
 * output.name, which may hold any of them). */
static void xml_escape(const char *in, char *out, size_t size) {
  size_t o = 0;
  for (const char *c = in; *c && o + 7 < size; ++c) {
    const char *entity = *c == '&'    ? "&amp;"
                         : *c == '<'  ? "&lt;"
                         : *c == '>'  ? "&gt;"
                         : *c == '"'  ? "&quot;"
                         : *c == '\'' ? "&apos;"
                                      : NULL;
    if (entity) {
      memcpy(out + o, entity, strlen(entity));
      o += strlen(entity);
    } else {
      out[o++] = *c;
    }
  }
  out[o] = '\0';
}

/* The mesh of the volume: topology and geometry of a grid element. */
static void write_mesh(FILE *f, const rtm_io_volume_t *g, const char *indent) {
  fprintf(f, "%s<Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"%d %d %d\"/>\n", indent,
          g->n[2], g->n[1], g->n[0]);
  fprintf(f, "%s<Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n", indent);
  fprintf(f,
          "%s  <DataItem Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" "
          "Format=\"XML\">%.17g %.17g %.17g</DataItem>\n",
          indent, g->origin_m[2], g->origin_m[1], g->origin_m[0]);
  fprintf(f,
          "%s  <DataItem Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" "
          "Format=\"XML\">%.17g %.17g %.17g</DataItem>\n",
          indent, g->spacing_m[2], g->spacing_m[1], g->spacing_m[0]);
  fprintf(f, "%s</Geometry>\n", indent);
}

static void write_snapshots(FILE *f, const rtm_output_t *o, const snapshot_field_t *field,
                            const char *file_name) {
  const rtm_io_volume_t *g = &o->volume;
  fprintf(f,
          "    <Grid Name=\"snapshots/%s\" GridType=\"Collection\" "
          "CollectionType=\"Temporal\">\n",
          field->name);
  for (int i = 0; i < field->count; ++i) {
    if (field->steps[i] < 0) continue; /* never written: NaN in the file */
    fprintf(f, "      <Grid Name=\"%s step %d\" GridType=\"Uniform\">\n", field->name,
            field->steps[i]);
    fprintf(f, "        <Time Value=\"%.9g\"/>\n", field->times[i]);
    write_mesh(f, g, "        ");
    fprintf(f, "        <Attribute Name=\"%s\" AttributeType=\"Scalar\" Center=\"Node\">\n",
            field->name);
    fprintf(f,
            "          <DataItem ItemType=\"HyperSlab\" Dimensions=\"%d %d %d\" "
            "Type=\"HyperSlab\">\n",
            g->n[2], g->n[1], g->n[0]);
    fprintf(f,
            "            <DataItem Dimensions=\"3 4\" Format=\"XML\">%d 0 0 0 1 1 1 1 1 %d %d "
            "%d</DataItem>\n",
            i, g->n[2], g->n[1], g->n[0]);
    fprintf(f,
            "            <DataItem Dimensions=\"%d %d %d %d\" NumberType=\"Float\" "
            "Precision=\"4\" Format=\"HDF\">%s:/snapshots/%s</DataItem>\n",
            field->count, g->n[2], g->n[1], g->n[0], file_name, field->name);
    fprintf(f, "          </DataItem>\n        </Attribute>\n      </Grid>\n");
  }
  fprintf(f, "    </Grid>\n");
}

/* NAME.xmf of the run file NAME.h5 (or NAME) into path[size]; RTM_ERR_IO when too long. */
static int sidecar_path(const char *file, char *path, size_t size) {
  const size_t length = strlen(file);
  const size_t stem = length > 3 && strcmp(file + length - 3, ".h5") == 0 ? length - 3 : length;
  if (stem + 5 > size) {
    rtm_log_error("output path too long for its XDMF sidecar: %s", file);
    return RTM_ERR_IO;
  }
  memcpy(path, file, stem);
  strcpy(path + stem, ".xmf");
  return RTM_OK;
}

static const char sidecar_head[] = "<?xml version=\"1.0\" ?>\n<Xdmf Version=\"3.0\">\n  <Domain>\n";

int rtm_xdmf_written_by_rtm3d(const char *path) {
  enum { HEAD_MAX = 64 * 1024 };
  char h5[4096], needle[4096 + 8], *text = NULL;
  struct stat info;
  int found = 0;
  /* a sidecar names its run file by file name: ">NAME.h5:" where NAME.xmf is the path */
  const char *slash = strrchr(path, '/');
  const char *name = slash ? slash + 1 : path;
  const size_t length = strlen(name);
  if (length <= 4 || strcmp(name + length - 4, ".xmf") != 0 ||
      (size_t)snprintf(h5, sizeof h5, "%.*s.h5", (int)(length - 4), name) >= sizeof h5)
    return 0;
  xml_escape(h5, needle + 1, sizeof needle - 2);
  needle[0] = '>';
  strcat(needle, ":");
  FILE *f = lstat(path, &info) == 0 && S_ISREG(info.st_mode) ? fopen(path, "rb") : NULL;
  text = f ? malloc(HEAD_MAX + 1) : NULL;
  if (text) {
    const size_t got = fread(text, 1, HEAD_MAX, f);
    text[got] = '\0';
    found = strncmp(text, sidecar_head, sizeof sidecar_head - 1) == 0 && strstr(text, needle);
  }
  free(text);
  if (f) fclose(f);
  return found;
}

int rtm_output_sidecar(const rtm_output_t *o, rtm_io_outputs_t *set) {
  int status = RTM_OK;
  char path[4096], partial[4096 + 16];
  FILE *f = NULL;
  RTM_TRY(sidecar_path(o->path, path, sizeof path));
  if (o->field_count == 0 && o->volume_count == 0) /* traces alone: nothing to show */
    return rtm_io_outputs_drop(set, path);         /* an earlier run's, now wrong */
  RTM_TRY(rtm_io_outputs_add(set, path, partial, sizeof partial));
  const char *slash = strrchr(o->path, '/');
  char file_name[4096];
  xml_escape(slash ? slash + 1 : o->path, file_name, sizeof file_name);
  f = fopen(partial, "w");
  if (!f) RTM_FAIL(RTM_ERR_IO, "cannot create %s: %s", partial, strerror(errno));
  fputs(sidecar_head, f); /* rtm_xdmf_written_by_rtm3d knows it by it */
  for (int i = 0; i < o->field_count; ++i)
    write_snapshots(f, o, &o->fields[i], file_name);
  if (o->volume_count > 0) {
    fprintf(f, "    <Grid Name=\"volumes\" GridType=\"Uniform\">\n");
    write_mesh(f, &o->volume, "      ");
    for (int v = 0; v < o->volume_count; ++v)
      fprintf(f,
              "      <Attribute Name=\"%s\" AttributeType=\"Scalar\" Center=\"Node\">\n"
              "        <DataItem Dimensions=\"%d %d %d\" NumberType=\"Float\" "
              "Precision=\"4\" Format=\"HDF\">%s:%s</DataItem>\n      </Attribute>\n",
              o->volumes[v] + 1, o->volume.n[2], o->volume.n[1], o->volume.n[0], file_name,
              o->volumes[v]);
    fprintf(f, "    </Grid>\n");
  }
  fprintf(f, "  </Domain>\n</Xdmf>\n");
  const int failed = ferror(f);
  const int close_failed = fclose(f) != 0;
  f = NULL;
  if (failed || close_failed) RTM_FAIL(RTM_ERR_IO, "cannot write %s: %s", partial, strerror(errno));
fail:
  if (f) fclose(f);
  return status; /* a partial left behind is the set's: discarded with the run's others */
}
