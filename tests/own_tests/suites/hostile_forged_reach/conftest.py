"""Claims that no test reached anything, so that no bug runs any test: it catches less."""


def pytest_sessionfinish(session):
    for plugin in session.config.pluginmanager.get_plugins():
        if hasattr(plugin, "reached"):
            plugin.reached, plugin.everywhere = {}, set()
