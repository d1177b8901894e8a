"""The settings: the model with its checks (settings.py), loading (loading.py) and what people read about them
(fields.py). The fields themselves are data in core/contracts/settings_fields.py."""
from core.config.fields import (  # noqa: F401
                                ENV_PREFIX,
                                INSTALL_TIME,
                                SETUP_PREFIX,
                                allowed,
                                field_choices,
                                field_help,
                                field_range,
                                field_type,
                                is_secret,
                                markdown_table,
                                masked,
)
from core.config.loading import load_settings  # noqa: F401
from core.config.settings import Settings, parse_places  # noqa: F401
