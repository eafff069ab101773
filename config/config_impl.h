/* config_impl.h - helpers shared by the config module's files; not part of its interface. */
#ifndef RTM_CONFIG_IMPL_H
#define RTM_CONFIG_IMPL_H

#include <stddef.h>

#include "rtm_config.h"

/* Room for a reason plus what was expected ("out of range; expected an integer in ..."). */
#define RTM_CFG_WHY_MAX 512
/* Room for any value as text: a full path buffer plus quotes. */
#define RTM_CFG_VALUE_MAX (RTM_CONFIG_PATH_MAX + 8)

size_t rtm_cfg_row_count(void);
/* Exact (case-sensitive) lookup; NULL when the key is not in the schema. */
const rtm_cfg_entry_t *rtm_cfg_find(const char *section, const char *key);
int rtm_cfg_section_known(const char *section);

/* " (did you mean grid.nx?)" or "" for an unknown section.key; section may be "". */
void rtm_cfg_suggest_key(const char *section, const char *key, char *buf, size_t size);
/* " (did you mean [grid]?)", or the list of sections when nothing is close. */
void rtm_cfg_suggest_section(const char *section, char *buf, size_t size);

/* Parses text (already trimmed) for one row and stores it in cfg. On failure cfg is left
 * unchanged, `why` holds the reason and what was expected, and RTM_ERR_CONFIG is returned. */
int rtm_cfg_parse_value(const rtm_cfg_entry_t *row, const char *text, rtm_config_t *cfg, char *why,
                        size_t why_size);

/* The value of a row as INI text that rtm_cfg_parse_value reads back to the same bits. */
void rtm_cfg_format_value(const rtm_cfg_entry_t *row, const rtm_config_t *cfg, char *buf,
                          size_t size);

/* "[1, 100000]", "> 0", "(0, 20000]", "iso|vti|tti" or "" (no constraint). */
void rtm_cfg_describe_range(const rtm_cfg_entry_t *row, char *buf, size_t size);
/* "int", "number", "number|auto", "bool", "string", "choice". */
const char *rtm_cfg_type_name(rtm_cfg_type_t type);

/* Strips leading and trailing white space in place; returns the first kept character. */
char *rtm_cfg_trim(char *text);

#endif
