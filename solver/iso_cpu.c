/* placeholder: being written */
typedef int rtm_placeholder_t;
